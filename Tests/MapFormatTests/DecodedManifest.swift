import Foundation
import MapFormat

/// The manifest as Foundation's `JSONDecoder` reads it through a synthesized `Decodable`: the
/// reference `ManifestReaderTests` holds `ManifestReader` to. `ImageManifest` itself is only
/// `Encodable` (mappack reads a manifest with `ManifestReader` alone), so the reference is this
/// mirror, its members declared in `ImageManifest`'s order (the order missing fields are found in).
struct DecodedManifest: Decodable {
    struct Region: Decodable {
        let id: RegionID
        let parent: RegionID?
        let name: String
        let names: [String: String]
        let bundles: [BundleDigest]
        let sizeOnDiskInBytes: Int64
        let center: [Double]?, bbox: [Double]?, cities: [String]?, released: String?
    }

    struct Bundle: Decodable {
        let digest: BundleDigest
        let size: Int64
        let url: String
        let files: Int
        let unpackedSize: Int64
    }

    struct File: Decodable {
        let path: StorePath
        let size: Int64
        let sha256: SHA256Digest
        let bundle: BundleDigest
    }

    struct Seed: Decodable {
        let sha256: SHA256Digest
        let size: Int64
        let entries: Int
        let regions: [RegionID]
    }

    let format: String
    let imageID: String
    let name: String
    let catalog: String
    let mapVersion: MapVersion
    let built: String
    let mappackVersion: String
    let blockSize: Int64
    let language: String?
    let regions: [Region]
    let bundles: [Bundle]
    let files: [File]
    let cacheSeed: Seed?

    /// `data` decoded by `JSONDecoder`, as an `ImageManifest`.
    static func decode(_ data: Data) throws -> ImageManifest {
        try JSONDecoder().decode(DecodedManifest.self, from: data).manifest
    }

    var manifest: ImageManifest {
        var manifest = ImageManifest(
            name: name, catalog: catalog, mapVersion: mapVersion, built: built, mappackVersion: mappackVersion, blockSize: blockSize,
            language: language,
            regions: regions.map {
                ImageRegion(
                    id: $0.id, parent: $0.parent, name: $0.name, names: $0.names, bundles: $0.bundles, sizeOnDiskInBytes: $0.sizeOnDiskInBytes,
                    center: $0.center, bbox: $0.bbox, cities: $0.cities, released: $0.released)
            },
            bundles: bundles.map { ImageBundle(digest: $0.digest, size: $0.size, url: $0.url, files: $0.files, unpackedSize: $0.unpackedSize) },
            files: files.map { ImageFile(path: $0.path, size: $0.size, sha256: $0.sha256, bundle: $0.bundle) },
            cacheSeed: cacheSeed.map { ImageCacheSeed(sha256: $0.sha256, size: $0.size, entries: $0.entries, regions: $0.regions) })
        manifest.format = format
        manifest.imageID = imageID
        return manifest
    }
}
