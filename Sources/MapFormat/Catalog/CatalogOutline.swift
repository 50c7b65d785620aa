import Foundation

/// What `mappack plan` needs of a catalog, and all a plan read keeps (`CatalogOutline.read`):
/// each region's id, parent, bundles and the names its language can pick; each bundle without its
/// URL. A type of its own, so what the read drops (URLs, centres, boxes, cities, release times,
/// other names) has no accessor and cannot be read by mistake as an empty value.
package struct CatalogOutline: Sendable {
    /// One region, as a plan read keeps it.
    package struct Region: Sendable {
        package let id: RegionID
        package let parent: RegionID?
        package let bundles: [BundleDigest]
        /// Only the names `CatalogOutline.language` can pick (all of them after an `allNames` read).
        private let names: [String: String]

        fileprivate init(_ region: CatalogRegion) {
            (id, parent, bundles, names) = (region.id, region.parent, region.bundles, region.names)
        }

        /// The name `CatalogRegion.name(in:)` gives for `language`, which must be the outline's.
        package func name(in language: String?) -> String { LocalizedNames.pick(names, language: language, fallback: id.rawValue) }
    }

    /// One bundle, as a plan read keeps it: everything but its URL.
    package struct Bundle: Sendable {
        /// Compressed bytes (the download).
        package let size: Int64
        package let unpackedSize: Int64
        package let kind: String?
        package let sizeOnDisk: SizeOnDiskTable?

        fileprivate init(_ info: BundleInfo) {
            (size, unpackedSize, kind, sizeOnDisk) = (info.size, info.unpackedSize, info.kind, info.sizeOnDisk)
        }

        /// `BundleInfo.sizeOnDisk(blockSize:)`.
        package func sizeOnDisk(blockSize: Int64) -> Int64? { sizeOnDisk?[blockSize] }
    }

    /// The tree over the read's catalog, which lacks what the read drops: private for that.
    private let tree: RegionTree
    /// The language whose names the regions keep; with `allNames`, every name is kept.
    package let language: String?
    package let allNames: Bool

    /// Reads `data` for a plan in `language`: the same checks as `CatalogReader.read` and
    /// `RegionTree(_:)`, keeping only the outline. Throws what they throw, though not always the
    /// same error for the same catalog (the file is named as given, bundle URLs are checked in the
    /// reader): a caller that must report what a full read reports reads again in full on failure.
    package static func read(_ data: Data, file: String, language: String?, allNames: Bool = false) throws -> CatalogOutline {
        let detail = CatalogDetail.plan(language: language, allNames: allNames)
        return CatalogOutline(tree: try RegionTree(CatalogReader.read(data, file: file, detail: detail), detail: detail), language, allNames)
    }

    /// The outline of a full read's tree (which holds everything an outline keeps).
    package init(_ tree: RegionTree, language: String?) {
        self.init(tree: tree, language, true)
    }

    private init(tree: RegionTree, _ language: String?, _ allNames: Bool) {
        (self.tree, self.language, self.allNames) = (tree, language, allNames)
    }

    /// The catalog's name (`catalog`).
    package var catalogName: String { tree.catalog.catalog }
    package var mapVersion: MapVersion { tree.catalog.mapVersion }
    package var warnings: [CatalogWarning] { tree.warnings }
    package var roots: [RegionID] { tree.roots }
    package var regionCount: Int { tree.catalog.regions.count }
    /// Every bundle's digest, sorted; a bundle's number is its index here.
    package var bundleDigests: [BundleDigest] { tree.bundleDigests }
    /// `RegionTree.parentPositions`.
    package var parentPositions: [Int32] { tree.parentPositions }

    /// The region at `position` (catalog order).
    package func region(at position: Int32) -> Region { Region(tree.catalog.regions[Int(position)]) }
    /// The id of the region at `position`, without the rest.
    package func regionID(at position: Int32) -> RegionID { tree.catalog.regions[Int(position)].id }
    package func position(of id: RegionID) -> Int32? { tree.position(of: id) }
    package func bundle(number: Int32) -> Bundle { Bundle(tree.bundleInfo(number: number)) }
    package func bundleNumbers(of position: Int32) -> ArraySlice<Int32> { tree.bundleNumbers(of: position) }
    /// `RegionTree.resolve`: a selector that is a name finds it only among the names kept.
    package func resolve(include: [RegionSelector], exclude: [RegionSelector]) throws(ResolutionError) -> RegionSelection {
        try tree.resolve(include: include, exclude: exclude)
    }
    /// The chain from a root down to `id`.
    package func ancestry(_ id: RegionID) -> [RegionID] { tree.ancestry(id) }
}
