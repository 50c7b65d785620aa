import Foundation
import MapFormat

/// A region source folder (`source.json` + `bundles/<name>/…`), as `demo-world` writes it and
/// `mappack publish` reads it (format `mappack-source/1`).
public struct SourceWorld: Codable, Sendable {
    /// The format this reader understands.
    public static let formatTag = FormatTag(name: "mappack-source", major: 1)

    /// One region; `bundles` names bundle folders.
    public struct Region: Codable, Sendable {
        public var id: RegionID
        public var parent: RegionID?
        public var names: [String: String]
        public var center: [Double]?
        public var bbox: [Double]?
        public var cities: [String]?
        public var released: String?
        public var bundles: [String]
    }

    /// Per bundle folder: what it holds.
    public struct Bundle: Codable, Sendable {
        public var kind: String?
    }

    public var format: String
    public var catalog: String
    public var mapVersion: MapVersion
    public var released: String?
    public var supportedUntil: String?
    public var regions: [Region]
    public var bundles: [String: Bundle]
    /// Bundle folders whose content changed from the previous version (informational).
    public var changed: [String]?
}
