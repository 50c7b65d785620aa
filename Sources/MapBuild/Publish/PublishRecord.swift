import Foundation
import MapFormat
import MapIO

/// `publish-record.json`, written beside every published catalog: which source content each bundle
/// was packed from, so that the next publish (`--previous`) packs only what changed (issue 33).
/// Devices never read it; it describes the publisher's inputs, not the map.
struct PublishRecord: Codable, Sendable, Equatable {
    /// The file's name beside `catalog.json`.
    static let fileName = "publish-record.json"
    /// The format tag.
    static let formatTag = FormatTag(name: "mappack-publish-record", major: 1)
    /// Larger than any record: 80 + 140 bytes per bundle, for a million bundles.
    static let maxBytes = 256 << 20

    var format = PublishRecord.formatTag.description
    /// The catalog id it was published as.
    var catalog: String
    /// SHA-256 of the `catalog.json` bytes published with it: a record pairs with one catalog.
    var catalogSHA256: SHA256Digest
    /// How bundles were packed (`BundleSource.packer`); bundles packed another way are not reused,
    /// since the same source would not give the same bytes.
    var packer: String
    /// Source digest (`BundleSource.digest`) → the bundle packed from it (`sha256:…`).
    var sources: [String: String]
}
