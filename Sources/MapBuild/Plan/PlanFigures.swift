import MapFormat

/// What `BuildPlan` reads of a catalog: a full `RegionTree` for a build, a `CatalogOutline` for
/// `mappack plan`. Both answer with positions and numbers, as `RegionTree` keeps them.
protocol PlanningTree {
    associatedtype Bundle: PlanningBundle
    var mapVersion: MapVersion { get }
    var regionCount: Int { get }
    /// Every bundle's digest, sorted; a bundle's number is its index here.
    var bundleDigests: [BundleDigest] { get }
    var parentPositions: [Int32] { get }
    func regionID(at position: Int32) -> RegionID
    func position(of id: RegionID) -> Int32?
    func bundleNumbers(of position: Int32) -> ArraySlice<Int32>
    func bundle(number: Int32) -> Bundle
    func resolve(include: [RegionSelector], exclude: [RegionSelector]) throws(ResolutionError) -> RegionSelection
}

/// What a plan reads of a bundle.
protocol PlanningBundle: Sendable {
    /// Compressed bytes (the download).
    var size: Int64 { get }
    var unpackedSize: Int64 { get }
    func sizeOnDisk(blockSize: Int64) -> Int64?
}

extension BundleInfo: PlanningBundle {}
extension CatalogOutline.Bundle: PlanningBundle {}

extension RegionTree: PlanningTree {
    var mapVersion: MapVersion { catalog.mapVersion }
    var regionCount: Int { catalog.regions.count }
    func regionID(at position: Int32) -> RegionID { catalog.regions[Int(position)].id }
    func bundle(number: Int32) -> BundleInfo { bundleInfo(number: number) }
}

extension CatalogOutline: PlanningTree {}

/// What `BuildPlan.figures` works out from a catalog, the recipe and the download cache, whichever
/// read of the catalog it had (`Info`: its bundle type).
struct PlanFigures<Info: PlanningBundle>: Sendable {
    /// One bundle the build needs.
    struct Bundle: Sendable {
        let digest: BundleDigest
        let info: Info
        /// Regions (selected or seed) that reference it.
        let regions: [RegionID]
        /// True when it goes to the store; false when only the cache seed uses it.
        let forStore: Bool
        /// True when the download cache already holds it.
        let cached: Bool
    }

    /// The fields as `BuildPlan` documents them.
    let selection: RegionSelection
    let seedSelection: RegionSelection
    let bundles: [Bundle]
    let downloadBytes: Int64
    let storeBundleBytes: Int64
    let seedBundleBytes: Int64
    let sizeOnDisk: Int64?
    let cacheSeedBytes: Int64
    let regionSizes: [RegionID: Int64]
    let selectedRegionSizes: [Int64]?
    let selectedRegionDownloadSizes: [Int64]
}
