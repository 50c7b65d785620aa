import Foundation
import MapFormat
import MapIO

/// What a build machine remembers of the newest trusted catalog of each catalog id, so `mappack build
/// --trust` refuses rollback and mix-and-match as a device does: one small JSON file per catalog id
/// under `<download cache>/catalog-trust/`, named by the SHA-256 of the id (an id never becomes a path).
public struct CatalogTrustLedger: Sendable {
    /// The ledger's folder.
    public let folder: String

    /// A ledger in `folder` (created on the first write).
    public init(folder: String) { self.folder = folder }

    private struct Record: Codable {
        var version: Int64
        var sha256: String
        var keys: [String]
    }

    func path(catalog: String) -> String { folder + "/" + SHA256.hex(Data(catalog.utf8)) + ".json" }

    /// What was seen for `catalog`, nil when nothing was.
    func seen(catalog: String) throws(CatalogSource.LoadError) -> SeenCatalog? {
        let path = path(catalog: catalog)
        guard FileSystem.exists(path) else { return nil }
        do {
            let record = try CanonicalJSON.decode(Record.self, from: try ReadableFile.contents(of: path, limit: 1 << 20), file: path)
            return SeenCatalog(version: record.version, sha256: record.sha256, keys: record.keys)
        } catch {
            throw .unreadable(url: path, reason: "the catalog trust ledger is damaged (\(error)); remove it to trust the next signed catalog afresh")
        }
    }

    /// Records `seen` for `catalog` (atomically replaced).
    func record(_ seen: SeenCatalog, catalog: String) throws(CatalogSource.LoadError) {
        let path = path(catalog: catalog)
        do {
            try FileSystem.makeDirectories(folder)
            try FileSystem.writeAtomically(try CanonicalJSON.encode(Record(version: seen.version, sha256: seen.sha256, keys: seen.keys)), to: path)
        } catch {
            throw .unreadable(url: path, reason: "cannot record the trusted catalog: \(error)")
        }
    }
}
