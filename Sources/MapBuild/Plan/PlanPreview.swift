import Foundation
import MapFetch
import MapFormat

/// What `mappack plan` prints, and no more: a plan made from the catalog's outline
/// (`CatalogOutline`: no bundle URL, no centre, bbox, cities or release time, names only in the
/// recipe's language). A type of its own, so such a plan cannot reach a build (`ImageBuilder`
/// takes a `BuildPlan`, which `BuildPlan.make` makes from a full read only).
public struct PlanPreview: Sendable {
    /// One bundle the build would need, as a plan shows it.
    public struct Bundle: Sendable {
        public let digest: BundleDigest
        /// Compressed bytes (the download).
        public let size: Int64
        public let unpackedSize: Int64
        public let kind: String?
        public let sizeOnDisk: SizeOnDiskTable?
        /// Regions (selected or seed) that reference it.
        public let regions: [RegionID]
        /// True when it goes to the store; false when only the cache seed uses it.
        public let forStore: Bool
        /// True when the download cache already holds it.
        public let cached: Bool
    }

    /// One selected region, as a plan shows it.
    public struct Region: Sendable {
        public let id: RegionID
        public let parent: RegionID?
        /// Its name in the recipe's language (the only names the outline is sure to keep).
        public let name: String
        public let bundles: [BundleDigest]
    }

    public let recipe: Recipe
    private let outline: CatalogOutline
    private let figures: PlanFigures<CatalogOutline.Bundle>
    /// Every bundle to fetch, sorted by digest.
    public let bundles: [Bundle]

    init(recipe: Recipe, outline: CatalogOutline, figures: PlanFigures<CatalogOutline.Bundle>) {
        (self.recipe, self.outline, self.figures) = (recipe, outline, figures)
        bundles = figures.bundles.map {
            Bundle(
                digest: $0.digest, size: $0.info.size, unpackedSize: $0.info.unpackedSize, kind: $0.info.kind, sizeOnDisk: $0.info.sizeOnDisk,
                regions: $0.regions, forStore: $0.forStore, cached: $0.cached)
        }
    }

    /// The catalog's name (`catalog`).
    public var catalogName: String { outline.catalogName }
    public var mapVersion: MapVersion { outline.mapVersion }
    /// Regions of the store with the include that brought each in.
    public var selection: RegionSelection { figures.selection }
    /// Bytes to download (bundles not in the cache).
    public var downloadBytes: Int64 { figures.downloadBytes }
    /// Compressed bytes of all needed bundles (`storeBundleBytes + seedBundleBytes`).
    public var totalBundleBytes: Int64 { figures.storeBundleBytes + figures.seedBundleBytes }
    /// Compressed bytes of the bundles that go into the image's store.
    public var storeBundleBytes: Int64 { figures.storeBundleBytes }
    /// Compressed bytes of the bundles only the cache seed uses.
    public var seedBundleBytes: Int64 { figures.seedBundleBytes }
    /// The store's size on disk at the recipe's block size, when the catalog declares it.
    public var sizeOnDisk: Int64? { figures.sizeOnDisk }
    /// Upper bound of the cache seed's content bytes (declared sizes, capped by maxBytes).
    public var cacheSeedBytes: Int64 { figures.cacheSeedBytes }
    /// `BuildPlan.selectedRegionSizes`.
    package var selectedRegionSizes: [Int64]? { figures.selectedRegionSizes }
    /// `BuildPlan.selectedRegionDownloadSizes`.
    package var selectedRegionDownloadSizes: [Int64] { figures.selectedRegionDownloadSizes }
    /// Bytes by which the image overshoots `target.capacity`, when it does.
    public var capacityOvershoot: Int64? { BuildPlan.overshoot(recipe: recipe, sizeOnDisk: sizeOnDisk, cacheSeedBytes: cacheSeedBytes) }

    /// The region at `index` in `selection.regions`.
    public func selectedRegion(_ index: Int) -> Region {
        let region = outline.region(at: figures.selection.regionPositions[index])
        return Region(id: region.id, parent: region.parent, name: region.name(in: recipe.language), bundles: region.bundles)
    }

    /// The first region `selector` resolves to (in tree order), nil when it resolves to none.
    public func firstRegion(of selector: RegionSelector) -> RegionID? {
        try? outline.resolve(include: [selector], exclude: []).regions.first?.id
    }

    /// The chain from a root down to `id` (`RegionTree.ancestry`).
    public func ancestry(_ id: RegionID) -> [RegionID] { outline.ancestry(id) }

    /// Throws when the image would not fit `target.capacity`.
    public func checkCapacity() throws(PlanError) {
        try BuildPlan.checkCapacity(recipe: recipe, overshoot: capacityOvershoot)
    }
}
