import Foundation
import MapFetch
import MapFormat
import MapIO

/// What a build will do, known before a byte is downloaded.
public struct BuildPlan: Sendable {
    /// One bundle the build needs.
    public struct PlannedBundle: Sendable {
        public let digest: BundleDigest
        public let info: BundleInfo
        /// Regions (selected or seed) that reference it.
        public let regions: [RegionID]
        /// True when it goes to the store; false when only the cache seed uses it.
        public let forStore: Bool
        /// True when the download cache already holds it.
        public let cached: Bool
    }

    public let recipe: Recipe
    public let tree: RegionTree
    /// The catalog's exact bytes (shards carry them).
    public let catalogBytes: Data
    /// Regions of the store with the include that brought each in.
    public let selection: RegionSelection
    /// Regions whose bundles feed the cache seed.
    public let seedSelection: RegionSelection
    /// Every bundle to fetch, sorted by digest.
    public let bundles: [PlannedBundle]
    /// Bytes to download (bundles not in the cache).
    public let downloadBytes: Int64
    /// Compressed bytes of all needed bundles.
    public let totalBundleBytes: Int64
    /// The store's size on disk at the recipe's block size, when the catalog declares it.
    public let sizeOnDisk: Int64?
    /// Upper bound of the cache seed's content bytes (declared sizes, capped by maxBytes).
    public let cacheSeedBytes: Int64
    /// Per selected region: its subtree's size on disk within the selection, when known.
    public let regionSizes: [RegionID: Int64]

    /// Bytes by which the image overshoots `target.capacity`, when it does.
    public var capacityOvershoot: Int64? {
        guard let capacity = recipe.capacity, let size = sizeOnDisk else { return nil }
        let needed = size + cacheSeedBytes
        return needed > capacity ? needed - capacity : nil
    }
}

/// Why a recipe cannot be planned.
public enum PlanError: Error, Sendable, CustomStringConvertible {
    case catalog(CatalogSource.LoadError)
    case resolution(ResolutionError)
    case mapVersionMismatch(recipe: MapVersion, catalog: MapVersion, file: String)
    case capacityExceeded(needed: Int64, capacity: Int64)

    public var description: String {
        switch self {
        case .catalog(let error): error.description
        case .resolution(let error): error.description
        case .mapVersionMismatch(let recipe, let catalog, let file):
            "\(file): recipe pins mapVersion \(recipe) but the catalog is at \(catalog); update the pin to build \(catalog), or point at the \(recipe) catalog"
        case .capacityExceeded(let needed, let capacity):
            "image needs \(ByteCount.format(needed)) (\(needed) bytes) but target.capacity is \(ByteCount.format(capacity)); over by \(ByteCount.format(needed - capacity)) (\(needed - capacity) bytes): drop regions or raise the capacity"
        }
    }
}

extension BuildPlan {
    /// Resolves `recipe` against its catalog and the download cache; nothing is downloaded.
    package static func make(recipe: Recipe, cache: DownloadCache) throws(PlanError) -> BuildPlan {
        let tree: RegionTree
        let catalogBytes: Data
        do { (tree, catalogBytes) = try CatalogSource.loadWithBytes(recipe.catalogURL) } catch { throw .catalog(error) }
        if let pinned = recipe.mapVersion, pinned != tree.catalog.mapVersion {
            throw .mapVersionMismatch(recipe: pinned, catalog: tree.catalog.mapVersion, file: recipe.file)
        }
        let selection: RegionSelection
        let seed: RegionSelection
        do {
            selection = try tree.resolve(include: recipe.include, exclude: recipe.exclude)
            seed = recipe.cacheSeedInclude.isEmpty ? RegionSelection.empty
                : try tree.resolve(include: recipe.cacheSeedInclude, exclude: [])
        } catch { throw .resolution(error) }
        let storeBundles = Set(selection.bundles)
        var users: [BundleDigest: [RegionID]] = [:]
        for (id, _) in selection.regions + seed.regions {
            for digest in tree.region(id)?.bundles ?? [] where !(users[digest]?.contains(id) ?? false) { users[digest, default: []].append(id) }
        }
        let all = storeBundles.union(seed.bundles).sorted()
        // An empty or missing cache answers for every bundle at once (no lstat per bundle).
        let cacheHasBundles = FileSystem.isDirectory(cache.root + "/sha256")
        let planned = all.map { digest in
            PlannedBundle(digest: digest, info: tree.catalog.bundles[digest]!, regions: users[digest] ?? [],
                          forStore: storeBundles.contains(digest), cached: cacheHasBundles && cache.contains(digest))
        }
        let seedOnly = Set(seed.bundles).subtracting(storeBundles)
        var seedBytes = seedOnly.reduce(Int64(0)) { $0 + tree.catalog.bundles[$1]!.unpackedSize }
        if let cap = recipe.cacheSeedMaxBytes { seedBytes = min(seedBytes, cap) }
        // Each bundle credits its size once to every selected region whose subtree uses it:
        // walking up from its users costs bundles × depth, not regions × subtree size.
        let selectedIDs = Set(selection.regions.map(\.id))
        var regionSizes: [RegionID: Int64] = [:]
        var sizesKnown = true
        for digest in storeBundles {
            guard let size = tree.catalog.bundles[digest]?.sizeOnDisk(blockSize: recipe.blockSize) else { sizesKnown = false; break }
            var credited: [RegionID] = []
            for user in users[digest] ?? [] where selectedIDs.contains(user) {
                var current: RegionID? = user
                while let id = current, selectedIDs.contains(id), !credited.contains(id) {
                    credited.append(id)
                    regionSizes[id, default: 0] += size
                    current = tree.region(id)?.parent
                }
            }
        }
        if sizesKnown {
            for (id, _) in selection.regions where regionSizes[id] == nil { regionSizes[id] = 0 }
        } else {
            regionSizes = [:]
        }
        let plan = BuildPlan(recipe: recipe, tree: tree, catalogBytes: catalogBytes, selection: selection, seedSelection: seed, bundles: planned,
                             downloadBytes: planned.filter { !$0.cached }.reduce(0) { $0 + $1.info.size },
                             totalBundleBytes: planned.reduce(0) { $0 + $1.info.size },
                             sizeOnDisk: tree.sizeOnDisk(storeBundles, blockSize: recipe.blockSize),
                             cacheSeedBytes: seedBytes, regionSizes: regionSizes)
        return plan
    }

    /// Throws when the image would not fit `target.capacity`.
    public func checkCapacity() throws(PlanError) {
        if let over = capacityOvershoot, let capacity = recipe.capacity {
            throw .capacityExceeded(needed: capacity + over, capacity: capacity)
        }
    }
}
