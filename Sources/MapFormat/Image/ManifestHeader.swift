import Foundation

/// What a streamed read of `manifest.json` keeps: every field but the file list and the bundle
/// list, which a stream hands out (files) or checks (bundles) without keeping. A type of its own,
/// so a caller of a streamed read cannot take an empty list for an image without files;
/// `ImageManifest` is the whole manifest.
public struct ManifestHeader: Sendable, Equatable {
    /// `mappack-image/<major>`.
    public let format: String
    /// The image id: SHA-256 (hex) of the canonical manifest with this field empty.
    public let imageID: String
    /// The recipe's name.
    public let name: String
    /// The catalog id.
    public let catalog: String
    /// The map version of every file in the image.
    public let mapVersion: MapVersion
    /// Build time (ISO 8601).
    public let built: String
    /// The mappack version that wrote the image.
    public let mappackVersion: String
    /// Filesystem block size `sizeOnDiskInBytes` was computed for.
    public let blockSize: Int64
    /// Language of `ImageRegion.name`.
    public let language: String?
    /// The regions in the store, with their declared sizes on disk.
    public let regions: [ImageRegion]
    /// The cache seed, when the image carries one.
    public let cacheSeed: ImageCacheSeed?
}

extension ManifestHeader {
    // The memberwise initializer, synthesized (internal), is `ManifestReader`'s.

    /// The header of `manifest`.
    public init(_ manifest: ImageManifest) {
        self.init(
            format: manifest.format, imageID: manifest.imageID, name: manifest.name, catalog: manifest.catalog,
            mapVersion: manifest.mapVersion, built: manifest.built, mappackVersion: manifest.mappackVersion,
            blockSize: manifest.blockSize, language: manifest.language, regions: manifest.regions, cacheSeed: manifest.cacheSeed)
    }
}

extension ImageManifest {
    /// Every field but the file and bundle lists.
    public var header: ManifestHeader { ManifestHeader(self) }

    /// The manifest of `header` with these lists.
    init(_ header: ManifestHeader, bundles: [ImageBundle], files: [ImageFile]) {
        self.init(
            name: header.name, catalog: header.catalog, mapVersion: header.mapVersion, built: header.built,
            mappackVersion: header.mappackVersion, blockSize: header.blockSize, language: header.language,
            regions: header.regions, bundles: bundles, files: files, cacheSeed: header.cacheSeed)
        format = header.format
        imageID = header.imageID
    }
}
