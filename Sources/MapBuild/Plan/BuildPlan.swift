import Foundation
import MapFetch
import MapFormat
import MapIO
import Synchronization

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
    /// The catalog's exact bytes, kept only when asked for (shards carry them; a build needs only
    /// their digest, and 4–9 MB less at its peak).
    public let catalogBytes: Data?
    /// SHA-256 of the catalog's bytes, hashed when first asked for (a plan never asks: 8 MB
    /// hashed for nothing was a few percent of it); a build asks at once, so the bytes go then.
    public var catalogSHA256: SHA256Digest { catalogDigest.value }
    private let catalogDigest: CatalogDigest
    /// Regions of the store with the include that brought each in.
    public let selection: RegionSelection
    /// Regions whose bundles feed the cache seed.
    public let seedSelection: RegionSelection
    /// Every bundle to fetch, sorted by digest.
    public let bundles: [PlannedBundle]
    /// Bytes to download (bundles not in the cache).
    public let downloadBytes: Int64
    /// Compressed bytes of all needed bundles (`storeBundleBytes + seedBundleBytes`).
    public let totalBundleBytes: Int64
    /// Compressed bytes of the bundles that go into the image's store.
    public let storeBundleBytes: Int64
    /// Compressed bytes of the bundles only the cache seed uses.
    public let seedBundleBytes: Int64
    /// The store's size on disk at the recipe's block size, when the catalog declares it.
    public let sizeOnDisk: Int64?
    /// Upper bound of the cache seed's content bytes (declared sizes, capped by maxBytes).
    public let cacheSeedBytes: Int64
    /// Per selected region: its subtree's size on disk within the selection, when known.
    public let regionSizes: [RegionID: Int64]
    /// `regionSizes` in the order of `selection.regions`; nil when the sizes are not known.
    package let selectedRegionSizes: [Int64]?
    /// Per selected region, in the order of `selection.regions`: the compressed bytes of its
    /// subtree's store bundles within the selection (a shared bundle counts for each region that
    /// uses it, once for their common ancestor), as `regions` shows a region's download.
    package let selectedRegionDownloadSizes: [Int64]

    /// Bytes by which the image overshoots `target.capacity`, when it does.
    public var capacityOvershoot: Int64? { Self.overshoot(recipe: recipe, sizeOnDisk: sizeOnDisk, cacheSeedBytes: cacheSeedBytes) }

    /// Bytes by which an image of `sizeOnDisk` and a cache seed of `cacheSeedBytes` overshoots
    /// `recipe`'s `target.capacity`, when it does (a `BuildPlan`'s or a `PlanPreview`'s).
    static func overshoot(recipe: Recipe, sizeOnDisk: Int64?, cacheSeedBytes: Int64) -> Int64? {
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
    case capacityExceeded(needed: Int64, capacity: Int64, file: String)

    public var description: String {
        switch self {
        case .catalog(let error): error.description
        case .resolution(let error): error.description
        case .mapVersionMismatch(let recipe, let catalog, let file):
            "\(file): recipe pins mapVersion \(recipe) but the catalog is at \(catalog); update the pin to build \(catalog), or point at the \(recipe) catalog"
        case .capacityExceeded(let needed, let capacity, let file):
            "\(file): image needs \(ByteCount.format(needed)) (\(needed) bytes) but target.capacity is \(ByteCount.format(capacity)); over by \(ByteCount.format(needed - capacity)) (\(needed - capacity) bytes): drop regions or raise target.capacity in the recipe"
        }
    }
}

extension BuildPlan {
    /// Resolves `recipe` against its catalog and the download cache; nothing is downloaded.
    package static func make(recipe: Recipe, cache: DownloadCache, keepCatalogBytes: Bool = false) throws(PlanError) -> BuildPlan {
        let tree: RegionTree
        let catalogBytes: Data
        do { (tree, catalogBytes) = try CatalogSource.loadWithBytes(recipe.catalogURL, cache: cache.root) } catch {
            throw .catalog(error.named(by: recipe))
        }
        let figures = try figures(recipe: recipe, tree: tree, cache: cache)
        return BuildPlan(
            recipe: recipe, tree: tree, catalogBytes: keepCatalogBytes ? catalogBytes : nil, catalogDigest: CatalogDigest(catalogBytes),
            selection: figures.selection, seedSelection: figures.seedSelection,
            bundles: figures.bundles.map {
                PlannedBundle(digest: $0.digest, info: $0.info, regions: $0.regions, forStore: $0.forStore, cached: $0.cached)
            },
            downloadBytes: figures.downloadBytes, totalBundleBytes: figures.storeBundleBytes + figures.seedBundleBytes,
            storeBundleBytes: figures.storeBundleBytes, seedBundleBytes: figures.seedBundleBytes, sizeOnDisk: figures.sizeOnDisk,
            cacheSeedBytes: figures.cacheSeedBytes, regionSizes: figures.regionSizes, selectedRegionSizes: figures.selectedRegionSizes,
            selectedRegionDownloadSizes: figures.selectedRegionDownloadSizes)
    }

    /// `recipe` planned as `mappack plan` prints it: from the catalog's outline (`CatalogOutline`),
    /// with every name when a selector is not an id (names select regions).
    package static func preview(recipe: Recipe, cache: DownloadCache) throws(PlanError) -> PlanPreview {
        var outline: CatalogOutline
        let selectors = recipe.include + recipe.exclude + recipe.cacheSeedInclude
        // A selector that does not look like an id (`Liechtenstein`, `Côte d'Ivoire`) is likely a
        // name, which needs every region's names.
        let allNames = !selectors.allSatisfy { looksLikeID($0.text) }
        do {
            let catalogBytes: Data
            (outline, catalogBytes) = try CatalogSource.loadOutline(
                recipe.catalogURL, cache: cache.root, language: recipe.language, allNames: allNames)
            if !outline.allNames, !selectors.allSatisfy({ outline.position(of: RegionID($0.text)) != nil }) {
                outline = try CatalogSource.decodeOutline(catalogBytes, url: recipe.catalogURL, language: recipe.language, allNames: true)
            }
        } catch {
            throw .catalog(error.named(by: recipe))
        }
        return PlanPreview(recipe: recipe, outline: outline, figures: try figures(recipe: recipe, tree: outline, cache: cache))
    }

    /// What a plan of `recipe` over `tree` comes to: the selections, the bundles and their sizes.
    static func figures<Tree: PlanningTree>(recipe: Recipe, tree: Tree, cache: DownloadCache) throws(PlanError) -> PlanFigures<Tree.Bundle> {
        if let pinned = recipe.mapVersion, pinned != tree.mapVersion {
            throw .mapVersionMismatch(recipe: pinned, catalog: tree.mapVersion, file: recipe.file)
        }
        let selection: RegionSelection
        let seed: RegionSelection
        do {
            selection = try tree.resolve(include: recipe.include, exclude: recipe.exclude)
            seed =
                recipe.cacheSeedInclude.isEmpty
                ? RegionSelection.empty
                : try tree.resolve(include: recipe.cacheSeedInclude, exclude: [])
        } catch { throw .resolution(error) }
        let bundleCount = tree.bundleDigests.count
        // Users of each bundle: the regions (store selection first, then seed) that list it, each
        // once, as a table of region positions by bundle number:
        // `users[userStarts[n]..<userEnds[n]]`.
        let members = selection.regionPositions + seed.regionPositions
        var userStarts = [Int32](repeating: 0, count: bundleCount + 1)
        for member in members {
            for number in tree.bundleNumbers(of: member) { userStarts[Int(number) + 1] += 1 }
        }
        for number in 0..<bundleCount { userStarts[number + 1] += userStarts[number] }
        var userEnds = userStarts
        var users = [Int32](repeating: 0, count: Int(userStarts[bundleCount]))
        for member in members {
            for number in tree.bundleNumbers(of: member) {
                let (start, end) = (Int(userStarts[Int(number)]), Int(userEnds[Int(number)]))
                if !users[start..<end].contains(member) {
                    users[end] = member
                    userEnds[Int(number)] += 1
                }
            }
        }
        var forStore = [Bool](repeating: false, count: bundleCount)
        for number in selection.bundleNumbers { forStore[Int(number)] = true }
        var needed = forStore
        for number in seed.bundleNumbers { needed[Int(number)] = true }

        // An empty or missing cache answers for every bundle at once (no lstat per bundle); so does
        // a listing of its folders, unless they hold many more files than the plan needs.
        let cacheHasBundles = FileSystem.isDirectory(cache.root + "/sha256")
        let neededCount = needed.reduce(0) { $1 ? $0 + 1 : $0 }
        let held = cacheHasBundles ? cache.held(among: tree.bundleDigests, listingAtMost: 4 * neededCount + 1024) : nil
        var planned: [PlanFigures<Tree.Bundle>.Bundle] = []
        planned.reserveCapacity(selection.bundleNumbers.count + seed.bundleNumbers.count)
        var downloadBytes: Int64 = 0
        var storeBundleBytes: Int64 = 0
        var seedBundleBytes: Int64 = 0
        var seedBytes: Int64 = 0
        // Each store bundle's size on disk at the recipe's block size, while every one is known.
        var onDisk: [Int64]? = [Int64](repeating: 0, count: bundleCount)
        var compressed = [Int64](repeating: 0, count: bundleCount)
        var soleUsers = [[RegionID]?](repeating: nil, count: tree.regionCount)
        for number in 0..<bundleCount where needed[number] {
            let digest = tree.bundleDigests[number]
            let info = tree.bundle(number: Int32(number))
            let bundleUsers: [RegionID]
            let userRange = Int(userStarts[number])..<Int(userEnds[number])
            if userRange.count == 1 {
                // Most bundles have one user: bundles of the same region share one array.
                let user = Int(users[userRange.lowerBound])
                if soleUsers[user] == nil { soleUsers[user] = [tree.regionID(at: Int32(user))] }
                bundleUsers = soleUsers[user]!
            } else {
                bundleUsers = users[userRange].map { tree.regionID(at: $0) }
            }
            let cached = cacheHasBundles && (held?[number] ?? cache.contains(digest))
            if !cached { downloadBytes += info.size }
            if forStore[number] {
                storeBundleBytes += info.size
                compressed[number] = info.size
                if let size = info.sizeOnDisk(blockSize: recipe.blockSize) { onDisk?[number] = size } else { onDisk = nil }
            } else {
                seedBundleBytes += info.size
                seedBytes += info.unpackedSize
            }
            planned.append(PlanFigures.Bundle(digest: digest, info: info, regions: bundleUsers, forStore: forStore[number], cached: cached))
        }
        if let cap = recipe.cacheSeedMaxBytes { seedBytes = min(seedBytes, cap) }

        // Each bundle credits its sizes once to every selected region whose subtree uses it:
        // walking up from its users costs bundles × depth, not regions × subtree size.
        var selected = [Bool](repeating: false, count: tree.regionCount)
        for position in selection.regionPositions { selected[Int(position)] = true }
        var diskSizes = [Int64](repeating: 0, count: tree.regionCount)
        var downloadSizes = [Int64](repeating: 0, count: tree.regionCount)
        var totalOnDisk: Int64 = 0
        var credited: [Int32] = []
        for number in selection.bundleNumbers {
            let size = onDisk?[Int(number)] ?? 0
            let download = compressed[Int(number)]
            totalOnDisk += size
            credited.removeAll(keepingCapacity: true)
            for user in users[Int(userStarts[Int(number)])..<Int(userEnds[Int(number)])] where selected[Int(user)] {
                var current = user
                while current >= 0, selected[Int(current)], !credited.contains(current) {
                    credited.append(current)
                    diskSizes[Int(current)] += size
                    downloadSizes[Int(current)] += download
                    current = tree.parentPositions[Int(current)]
                }
            }
        }
        let sizeOnDisk: Int64? = onDisk == nil ? nil : totalOnDisk
        let selectedSizes: [Int64]? = onDisk == nil ? nil : selection.regionPositions.map { diskSizes[Int($0)] }
        var regionSizes: [RegionID: Int64] = [:]
        if let selectedSizes {
            regionSizes.reserveCapacity(selectedSizes.count)
            for (entry, size) in zip(selection.regions, selectedSizes) { regionSizes[entry.id] = size }
        }
        return PlanFigures(
            selection: selection, seedSelection: seed, bundles: planned, downloadBytes: downloadBytes, storeBundleBytes: storeBundleBytes,
            seedBundleBytes: seedBundleBytes, sizeOnDisk: sizeOnDisk, cacheSeedBytes: seedBytes, regionSizes: regionSizes,
            selectedRegionSizes: selectedSizes, selectedRegionDownloadSizes: selection.regionPositions.map { downloadSizes[Int($0)] })
    }

    /// True for text in the shape ids usually have: lower-case ASCII letters, digits, `/`, `.`, `_`,
    /// `-`, `+` (a guess: a name in that shape is found too, by a second read).
    private static func looksLikeID(_ text: String) -> Bool {
        text.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || "/._-+".utf8.contains(byte)
        }
    }

    /// Throws when the image would not fit `target.capacity`.
    public func checkCapacity() throws(PlanError) { try Self.checkCapacity(recipe: recipe, overshoot: capacityOvershoot) }

    /// Throws when `overshoot` says an image of `recipe` would not fit its `target.capacity`.
    static func checkCapacity(recipe: Recipe, overshoot: Int64?) throws(PlanError) {
        if let over = overshoot, let capacity = recipe.capacity {
            throw .capacityExceeded(needed: capacity + over, capacity: capacity, file: recipe.file)
        }
    }
}

/// A catalog's SHA-256, computed from its bytes at the first request; the bytes are let go then.
private final class CatalogDigest: Sendable {
    private let state: Mutex<(bytes: Data?, digest: SHA256Digest?)>

    init(_ bytes: Data) { state = Mutex((bytes, nil)) }

    var value: SHA256Digest {
        state.withLock { state in
            if let digest = state.digest { return digest }
            let digest = SHA256.digest(state.bytes ?? Data())
            state = (nil, digest)
            return digest
        }
    }
}
