import Foundation
import MapFetch
import MapFormat

/// What `mappack plan` prints, and no more: a plan made from a catalog read for printing
/// (`CatalogDetail.plan`), whose bundles have no URL and whose regions have no centre, bbox,
/// cities or release time, and names only in the recipe's language. A type of its own, so what
/// the lighter read dropped cannot be read by mistake, and such a plan cannot reach a build
/// (`ImageBuilder` takes a `BuildPlan`, which `BuildPlan.make` makes from a full read only).
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
        /// Its name in the recipe's language (the only names the lighter read is sure to keep).
        public let name: String
        public let bundles: [BundleDigest]
    }

    /// The plan over the lighter read's tree; private, since its catalog lacks what that read drops.
    private let plan: BuildPlan
    /// Every bundle to fetch, sorted by digest.
    public let bundles: [Bundle]

    init(_ plan: BuildPlan) {
        self.plan = plan
        bundles = plan.bundles.map {
            Bundle(
                digest: $0.digest, size: $0.info.size, unpackedSize: $0.info.unpackedSize, kind: $0.info.kind, sizeOnDisk: $0.info.sizeOnDisk,
                regions: $0.regions, forStore: $0.forStore, cached: $0.cached)
        }
    }

    public var recipe: Recipe { plan.recipe }
    /// The catalog's name (`catalog`).
    public var catalogName: String { plan.tree.catalog.catalog }
    public var mapVersion: MapVersion { plan.tree.catalog.mapVersion }
    /// Regions of the store with the include that brought each in.
    public var selection: RegionSelection { plan.selection }
    /// Bytes to download (bundles not in the cache).
    public var downloadBytes: Int64 { plan.downloadBytes }
    /// Compressed bytes of all needed bundles (`storeBundleBytes + seedBundleBytes`).
    public var totalBundleBytes: Int64 { plan.totalBundleBytes }
    /// Compressed bytes of the bundles that go into the image's store.
    public var storeBundleBytes: Int64 { plan.storeBundleBytes }
    /// Compressed bytes of the bundles only the cache seed uses.
    public var seedBundleBytes: Int64 { plan.seedBundleBytes }
    /// The store's size on disk at the recipe's block size, when the catalog declares it.
    public var sizeOnDisk: Int64? { plan.sizeOnDisk }
    /// Upper bound of the cache seed's content bytes (declared sizes, capped by maxBytes).
    public var cacheSeedBytes: Int64 { plan.cacheSeedBytes }
    /// `BuildPlan.selectedRegionSizes`.
    package var selectedRegionSizes: [Int64]? { plan.selectedRegionSizes }
    /// `BuildPlan.selectedRegionDownloadSizes`.
    package var selectedRegionDownloadSizes: [Int64] { plan.selectedRegionDownloadSizes }
    /// Bytes by which the image overshoots `target.capacity`, when it does.
    public var capacityOvershoot: Int64? { plan.capacityOvershoot }

    /// The region at `index` in `selection.regions`.
    public func selectedRegion(_ index: Int) -> Region {
        let region = plan.tree.regions[Int(plan.selection.regionPositions[index])]
        return Region(id: region.id, parent: region.parent, name: region.name(in: plan.recipe.language), bundles: region.bundles)
    }

    /// The first region `selector` resolves to (in tree order), nil when it resolves to none.
    public func firstRegion(of selector: RegionSelector) -> RegionID? {
        try? plan.tree.resolve(include: [selector], exclude: []).regions.first?.id
    }

    /// The chain from a root down to `id` (`RegionTree.ancestry`).
    public func ancestry(_ id: RegionID) -> [RegionID] { plan.tree.ancestry(id) }

    /// Throws when the image would not fit `target.capacity`.
    public func checkCapacity() throws(PlanError) { try plan.checkCapacity() }
}

extension BuildPlan {
    /// `recipe` planned as `mappack plan` prints it: the catalog read keeps only that
    /// (`CatalogDetail.plan`), with every name when a selector is not an id (names select regions).
    package static func preview(recipe: Recipe, cache: DownloadCache) throws(PlanError) -> PlanPreview {
        PlanPreview(try make(recipe: recipe, cache: cache, catalogDetail: .plan(language: recipe.language)))
    }
}
