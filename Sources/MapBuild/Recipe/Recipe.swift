import Foundation
import MapFormat

/// A build recipe (`Recipes/*.yaml`): which regions of which catalog go into an image, and how.
public struct Recipe: Sendable {
    /// Image formats a build writes.
    public enum OutputFormat: String, Sendable, CaseIterable {
        case directory
        case tarZst = "tar.zst"
        /// The image's tiles as one MBTiles 1.3 file (`<image>.mbtiles`).
        case mbtiles
        /// The image's tiles as a MapLibre Native offline database (`<image>.maplibre.db`, schema 6).
        case maplibreOffline = "maplibre-offline"
        /// The image's tiles as one PMTiles v3 archive (`<image>.pmtiles`), for static map hosting.
        case pmtiles
        /// The image as a device partition image (`<image>.erofs`): an EROFS filesystem with a
        /// dm-verity hash tree appended, and its signed sidecar (`<image>.erofs.verity.json`).
        case erofs
    }

    /// The recipe file it was read from.
    public var file: String
    /// The image name.
    public var name: String
    /// The catalog as written (path relative to the recipe, or URL).
    public var catalog: String
    /// `catalog`, resolved to a URL.
    public var catalogURL: URL
    /// The pinned map version, when given.
    public var mapVersion: MapVersion?
    /// Language of the names in the manifest.
    public var language: String?
    /// Regions to include with their descendants.
    public var include: [RegionSelector]
    /// Regions to leave out with their descendants.
    public var exclude: [RegionSelector]
    /// Regions whose data goes into the cache seed.
    public var cacheSeedInclude: [RegionSelector]
    /// Cap on the cache seed's content bytes.
    public var cacheSeedMaxBytes: Int64?
    /// Device filesystem block size.
    public var blockSize: Int64
    /// Device capacity the image must fit.
    public var capacity: Int64?
    /// Formats to write.
    public var formats: [OutputFormat]
    /// `output.sync: true`: the outputs are made durable before they show, as `--sync` asks.
    public var sync: Bool = false
    /// The recipe file's exact bytes (shards carry them so a merge can check and replay the build).
    public var source: Data = Data()
    /// The line of `catalog:` in the recipe file, for errors about the catalog (0 when unknown).
    public var catalogLine: Int = 0
}

/// A recipe that cannot be used, with the place it was found.
public struct RecipeError: Error, Sendable, CustomStringConvertible {
    /// The recipe file.
    public let file: String
    /// 1-based line, 0 when unknown.
    public let line: Int
    /// 1-based column, 0 when unknown.
    public let column: Int
    /// What is wrong and what to do.
    public let message: String

    public var description: String {
        line > 0 ? "\(file):\(line):\(column): \(message)" : "\(file): \(message)"
    }
}
