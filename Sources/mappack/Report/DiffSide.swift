import Foundation
import MapBuild
import MapFormat
import MapIO
import MapVerify

/// One side of `mappack diff`: an image or a catalog, the parts of it a diff compares, and how
/// every view of the diff names it.
struct DiffSide {
    /// What a side is and how the reports name it: an image by its name, version and id, a
    /// catalog by its id, version and file; both by the path given.
    struct Label: Encodable {
        enum Source: String, Encodable { case image, catalog }

        /// `image` or `catalog`.
        let kind: Source
        /// The image's name (its recipe's), or the catalog's id.
        let name: String
        let mapVersion: String
        /// The image id (hex); none for a catalog.
        let imageID: String?
        /// The catalog id (an image's: the catalog it was built from).
        let catalog: String
        /// The path or URL the command line gave.
        let path: String

        /// Short enough for a title: `image alps 2026.11.0 (id 3f2a9c1b0d4e)`, `catalog
        /// demo-world 2026.11.0 (cat-2026.11.0/catalog.json)`.
        var title: String {
            switch kind {
            case .image: "image \(name) \(mapVersion) (id \(imageID.map { String($0.prefix(12)) } ?? "?"))"
            case .catalog: "catalog \(name) \(mapVersion) (\(path.split(separator: "/").suffix(2).joined(separator: "/")))"
            }
        }

        /// Everything, for the line that names the side: the title's facts, the catalog an image
        /// was built from, and the whole path.
        var text: String {
            switch kind {
            case .image:
                "image \(name) \(mapVersion), id \(imageID.map { String($0.prefix(12)) } ?? "?"), from catalog \(catalog), \(path)"
            case .catalog: "catalog \(name) \(mapVersion), \(path)"
            }
        }
    }

    var label: Label
    var mapVersion: MapVersion
    var regions: [RegionID: Set<BundleDigest>]
    var bundleSizes: [BundleDigest: Int64]
    /// For the reports: each region's parent and name, each bundle's kind.
    var parents: [RegionID: RegionID] = [:]
    var names: [RegionID: String] = [:]
    var kinds: [BundleDigest: String] = [:]

    /// The compressed bytes of `bundles` on this side, saturating (an image's manifest sizes are
    /// not bounded the way a catalog's are).
    func bytes<S: Sequence>(of bundles: S) -> Int64 where S.Element == BundleDigest {
        bundles.reduce(Int64(0)) { total, digest in
            let (sum, overflow) = total.addingReportingOverflow(bundleSizes[digest] ?? 0)
            return overflow ? Int64.max : sum
        }
    }

    /// Reads a catalog (a `.json` path or a URL) or an image (a folder or `.tar.zst`).
    static func load(_ path: String) throws -> DiffSide {
        if path.hasSuffix(".json") || path.contains("://") {
            let tree = try CatalogSource.load(try Arguments.catalogURL(path))
            var side = DiffSide(
                label: Label(
                    kind: .catalog, name: tree.catalog.catalog, mapVersion: tree.catalog.mapVersion.rawValue, imageID: nil,
                    catalog: tree.catalog.catalog, path: path),
                mapVersion: tree.catalog.mapVersion,
                regions: Dictionary(uniqueKeysWithValues: tree.regions.map { ($0.id, Set($0.bundles)) }),
                bundleSizes: tree.catalog.bundles.mapValues(\.size))
            for region in tree.regions {
                side.parents[region.id] = region.parent
                side.names[region.id] = region.name(in: nil)
            }
            side.kinds = tree.catalog.bundles.compactMapValues(\.kind)
            return side
        }
        guard FileSystem.exists(path) else { throw ImageOpenError.noSuchFile(path: path) }
        let report = FileSystem.isDirectory(path) ? try ImageVerifier.verifyFolder(path, hashContents: false) : try ImageVerifier.verifyPacked(path)
        let manifest = report.manifest
        var side = DiffSide(
            label: Label(
                kind: .image, name: manifest.name, mapVersion: manifest.mapVersion.rawValue, imageID: manifest.imageID,
                catalog: manifest.catalog, path: path),
            mapVersion: manifest.mapVersion,
            // A hostile manifest may repeat an id or a digest: the first counts, nothing traps.
            regions: Dictionary(manifest.regions.map { ($0.id, Set($0.bundles)) }, uniquingKeysWith: { first, _ in first }),
            bundleSizes: Dictionary(manifest.bundles.map { ($0.digest, $0.size) }, uniquingKeysWith: { first, _ in first }))
        for region in manifest.regions where side.names[region.id] == nil {
            side.parents[region.id] = region.parent
            side.names[region.id] = region.name
        }
        var files: [BundleDigest: [(path: String, size: Int64)]] = [:]
        for file in manifest.files { files[file.bundle, default: []].append((file.path.string, file.size)) }
        side.kinds = files.mapValues { SizeReport.kindLabel(files: $0) }
        return side
    }
}
