/// A validated catalog with its region tree indexed for lookups and resolution.
///
/// Inside, a region is its position in `catalog.regions` and a bundle is its position among the
/// catalog's digests in sorted order (its *number*); parents, children and each region's bundles
/// are flat arrays of those, so validating, resolving and planning walk integers instead of
/// hashing ids and digests (a planet catalog has thousands of regions and tens of thousands of
/// bundles).
public struct RegionTree: Sendable {
    /// The catalog the tree was built from.
    public let catalog: Catalog
    /// Findings that do not stop a build.
    public let warnings: [CatalogWarning]
    /// Roots, sorted by id.
    public let roots: [RegionID]

    /// Region position by id.
    private let index: [RegionID: Int32]
    /// Each region's parent position; -1 at a root.
    package let parentPositions: [Int32]
    /// Root positions, sorted by id.
    package let rootPositions: [Int32]
    /// Children of the region at `p`: `childPositions[childStarts[p]..<childStarts[p + 1]]`, sorted by id.
    private let childStarts: [Int32]
    private let childPositions: [Int32]
    /// Every digest in `catalog.bundles`, sorted; a bundle's number is its position here.
    package let bundleDigests: [BundleDigest]
    /// Where each bundle's entry is in `catalog.bundles`, by number: a plan reads every bundle it
    /// needs without hashing its digest again.
    private let bundleEntries: [Dictionary<BundleDigest, BundleInfo>.Index]
    /// The bundles the region at `p` lists, as numbers, in its order:
    /// `regionBundles[bundleStarts[p]..<bundleStarts[p + 1]]`.
    private let bundleStarts: [Int32]
    private let regionBundles: [Int32]

    /// Largest size a catalog may declare for one bundle before it is taken as absurd.
    public static let absurdSize: Int64 = 1 << 50

    /// Deepest a region may sit below its root (a root is level 1). Real trees have a handful of
    /// levels; the cap keeps every walk up or down a chain short.
    public static let maxDepth = 64

    /// Validates `catalog`: format major, unique ids, existing parents, no cycles, existing bundles, sane sizes.
    /// The checks run in that order of kinds; within a kind, the first offender in catalog order
    /// (bundles: in digest order) is reported.
    public init(_ catalog: Catalog) throws(CatalogError) {
        try self.init(catalog, detail: .full)
    }

    /// `init(_:)` for a catalog `CatalogReader` read with `detail`: a `plan` read's bundles have no
    /// URL (the reader checked them), so none is checked here.
    init(_ catalog: Catalog, detail: CatalogDetail) throws(CatalogError) {
        do { try FormatTagError.check(catalog.format, expected: Catalog.formatTag) } catch { throw .format(error) }
        // `CatalogReader` refuses these with a line number; catalogs decoded otherwise (MapStore's
        // updates, the publisher) are held to the same grammar here.
        if let reason = PathName.problem(catalog.catalog) { throw .invalidName(field: "catalog", value: catalog.catalog, reason: reason) }
        if let reason = PathName.problem(catalog.mapVersion.rawValue) {
            throw .invalidName(field: "mapVersion", value: catalog.mapVersion.rawValue, reason: reason)
        }
        let regions = catalog.regions
        var index: [RegionID: Int32] = [:]
        index.reserveCapacity(regions.count)
        // Fields are read in place (`regions[position].id`): binding whole regions would copy
        // (and retain) every one of their arrays and strings.
        for position in regions.indices {
            let id = regions[position].id
            if id.rawValue.isEmpty { throw .emptyRegionID }
            if let reason = PathName.regionIDProblem(id.rawValue) { throw .invalidRegionID(id, reason: reason) }
            if index.updateValue(Int32(position), forKey: id) != nil { throw .duplicateRegion(id) }
        }
        try RegionTree.checkBundles(catalog.bundles, urls: detail == .full)
        // Digests sorted with their entries (the keys' own order, read by index, not by hashing).
        var keyed: [(digest: BundleDigest, entry: Dictionary<BundleDigest, BundleInfo>.Index)] = []
        keyed.reserveCapacity(catalog.bundles.count)
        var entry = catalog.bundles.startIndex
        while entry != catalog.bundles.endIndex {
            keyed.append((catalog.bundles.keys[entry], entry))
            catalog.bundles.formIndex(after: &entry)
        }
        keyed = RegionTree.sortedByDigest(keyed)
        let digests = keyed.map(\.digest)

        var parents = [Int32](repeating: -1, count: regions.count)
        var childCounts = [Int32](repeating: 0, count: regions.count)
        var roots: [Int32] = []
        var bundleStarts: [Int32] = []
        bundleStarts.reserveCapacity(regions.count + 1)
        var regionBundles: [Int32] = []
        regionBundles.reserveCapacity(digests.count)
        var referenced = [Bool](repeating: false, count: digests.count)
        for position in regions.indices {
            if regions[position].names.isEmpty { throw .noNames(region: regions[position].id) }
            bundleStarts.append(Int32(regionBundles.count))
            for bundle in regions[position].bundles {
                guard let number = RegionTree.number(of: bundle, in: digests) else {
                    throw .missingBundle(region: regions[position].id, bundle: bundle)
                }
                regionBundles.append(number)
                referenced[Int(number)] = true
            }
            if let parent = regions[position].parent {
                guard let parentPosition = index[parent] else { throw .unknownParent(region: regions[position].id, parent: parent) }
                parents[position] = parentPosition
                childCounts[Int(parentPosition)] += 1
            } else {
                roots.append(Int32(position))
            }
        }
        bundleStarts.append(Int32(regionBundles.count))
        try RegionTree.checkCycles(regions, parents: parents, roots: roots)
        try RegionTree.checkDepth(regions, parents: parents)

        // Children grouped by parent (counting sort), then each group sorted by id.
        var childStarts = [Int32](repeating: 0, count: regions.count + 1)
        for position in regions.indices { childStarts[position + 1] = childStarts[position] + childCounts[position] }
        var next = childStarts
        var childPositions = [Int32](repeating: 0, count: Int(childStarts[regions.count]))
        for position in regions.indices where parents[position] >= 0 {
            let parent = Int(parents[position])
            childPositions[Int(next[parent])] = Int32(position)
            next[parent] += 1
        }
        for position in regions.indices where childCounts[position] > 1 {
            childPositions[Int(childStarts[position])..<Int(childStarts[position + 1])].sort { regions[Int($0)].id < regions[Int($1)].id }
        }
        roots.sort { regions[Int($0)].id < regions[Int($1)].id }

        self.catalog = catalog
        self.index = index
        self.parentPositions = parents
        self.rootPositions = roots
        self.roots = roots.map { regions[Int($0)].id }
        self.childStarts = childStarts
        self.childPositions = childPositions
        self.bundleDigests = digests
        self.bundleEntries = keyed.map(\.entry)
        self.bundleStarts = bundleStarts
        self.regionBundles = regionBundles
        self.warnings = referenced.indices.filter { !referenced[$0] }.map { .unreferencedBundle(digests[$0]) }
    }

    /// `keyed` sorted by digest. Digests are spread evenly, so they are counted into 2^16 buckets
    /// by their first 16 bits, each bucket (a few at most) then sorted on its own: linear, where a
    /// comparison sort of a planet's 16,000 bundles was a quarter of building its tree. A bucket of
    /// many (a crafted catalog) is left to the standard library's sort.
    package static func sortedByDigest<Entry>(_ keyed: [(digest: BundleDigest, entry: Entry)]) -> [(digest: BundleDigest, entry: Entry)] {
        guard keyed.count > 256 else { return keyed.sorted { $0.digest < $1.digest } }
        let buckets = 1 << 16
        func bucket(_ digest: BundleDigest) -> Int { Int(digest.sha256.w0 >> 48) }
        var starts = [Int32](repeating: 0, count: buckets + 1)
        for item in keyed { starts[bucket(item.digest) + 1] += 1 }
        for index in 0..<buckets { starts[index + 1] += starts[index] }
        var next = starts
        var sorted = keyed
        for item in keyed {
            let index = bucket(item.digest)
            sorted[Int(next[index])] = item
            next[index] += 1
        }
        for index in 0..<buckets where starts[index + 1] - starts[index] > 1 {
            let range = Int(starts[index])..<Int(starts[index + 1])
            if range.count > 16 {
                sorted[range].sort { $0.digest < $1.digest }
                continue
            }
            // Insertion sort of a handful.
            for position in range.dropFirst() {
                let item = sorted[position]
                var hole = position
                while hole > range.lowerBound && item.digest < sorted[hole - 1].digest {
                    sorted[hole] = sorted[hole - 1]
                    hole -= 1
                }
                sorted[hole] = item
            }
        }
        return sorted
    }

    /// Sizes and URLs: throws for the first offending bundle in digest order (its first offending
    /// field), without sorting the bundles to find it.
    private static func checkBundles(_ bundles: [BundleDigest: BundleInfo], urls: Bool) throws(CatalogError) {
        var first: (digest: BundleDigest, error: CatalogError)?
        // Each size is at most `absurdSize`, but thousands of them can still pass 2^63 together;
        // refused here, no sum over any set of this catalog's bundles can overflow later. Summed in
        // the same pass (one walk of the dictionary), the first overflow in its order is the one named.
        var size: Int64 = 0
        var unpacked: Int64 = 0
        var onDisk: Int64 = 0
        var files: Int64 = 0
        var overflowed: String?
        for (digest, info) in bundles {
            if first.map({ digest < $0.digest }) ?? true, let error = problem(info, digest, url: urls) { first = (digest, error) }
            if overflowed != nil { continue }
            var overflow = false
            (size, overflow) = size.addingReportingOverflow(info.size)
            if overflow { overflowed = "size" }
            (unpacked, overflow) = unpacked.addingReportingOverflow(info.unpackedSize)
            if overflow && overflowed == nil { overflowed = "unpackedSize" }
            (files, overflow) = files.addingReportingOverflow(Int64(info.files ?? 0))
            if overflow && overflowed == nil { overflowed = "files" }
            if let range = info.sizeOnDisk?.bytesRange {
                (onDisk, overflow) = onDisk.addingReportingOverflow(range.max)
                if overflow && overflowed == nil { overflowed = "sizeOnDisk" }
            }
        }
        if let first { throw first.error }
        if let overflowed { throw .totalTooLarge(field: overflowed) }
    }

    private static func problem(_ info: BundleInfo, _ digest: BundleDigest, url: Bool) -> CatalogError? {
        func absurd(_ value: Int64) -> Bool { value < 0 || value > RegionTree.absurdSize }
        if absurd(info.size) { return .invalidSize(bundle: digest, field: "size", value: info.size) }
        if absurd(info.unpackedSize) { return .invalidSize(bundle: digest, field: "unpackedSize", value: info.unpackedSize) }
        if absurd(Int64(info.files ?? 0)) { return .invalidSize(bundle: digest, field: "files", value: Int64(info.files ?? 0)) }
        if let range = info.sizeOnDisk?.bytesRange {
            if range.min < 0 { return .invalidSize(bundle: digest, field: "sizeOnDisk", value: range.min) }
            if range.max > RegionTree.absurdSize { return .invalidSize(bundle: digest, field: "sizeOnDisk", value: range.max) }
        }
        if url && urlProblem(info.url) { return .invalidBundleURL(bundle: digest, url: info.url) }
        if let (field, value, reason) = info.chunked?.parameterProblem {
            return .invalidChunking(bundle: digest, field: "chunked." + field, value: value, reason: reason)
        }
        return nil
    }

    /// Every region must reach a root; a region that does not sits on a cycle, reported from the
    /// first such region in catalog order.
    private static func checkCycles(_ regions: [CatalogRegion], parents: [Int32], roots: [Int32]) throws(CatalogError) {
        var reachesRoot = [Bool](repeating: false, count: regions.count)
        for root in roots { reachesRoot[Int(root)] = true }
        // The walk (by its starting position) that last passed each region.
        var walkOf = [Int32](repeating: -1, count: regions.count)
        var chain: [Int32] = []
        for start in regions.indices where !reachesRoot[start] {
            let walk = Int32(start)
            chain.removeAll(keepingCapacity: true)
            chain.append(walk)
            walkOf[start] = walk
            var current = start
            while parents[current] >= 0, !reachesRoot[Int(parents[current])] {
                let parent = Int(parents[current])
                if walkOf[parent] == walk {
                    let cycle = chain[chain.firstIndex(of: Int32(parent))!...]
                    throw .parentCycle(cycle.map { regions[Int($0)].id } + [regions[parent].id])
                }
                walkOf[parent] = walk
                chain.append(Int32(parent))
                current = parent
            }
            for member in chain { reachesRoot[Int(member)] = true }
        }
    }

    /// Every region at most `maxDepth` levels deep; each region's depth is found once (a walk up
    /// stops at the first region whose depth is known), so the check is linear.
    private static func checkDepth(_ regions: [CatalogRegion], parents: [Int32]) throws(CatalogError) {
        var depth = [Int32](repeating: 0, count: regions.count)
        var chain: [Int32] = []
        for start in regions.indices where depth[start] == 0 {
            chain.removeAll(keepingCapacity: true)
            var current = Int32(start)
            while current >= 0 && depth[Int(current)] == 0 {
                chain.append(current)
                current = parents[Int(current)]
            }
            var level = current >= 0 ? depth[Int(current)] : 0
            while let member = chain.popLast() {
                level += 1
                if level > Int32(maxDepth) { throw .tooDeep(region: regions[Int(member)].id, limit: maxDepth) }
                depth[Int(member)] = level
            }
        }
    }

    /// The number of `digest` (its position in the sorted `digests`), if present.
    private static func number(of digest: BundleDigest, in digests: [BundleDigest]) -> Int32? {
        var low = 0
        var high = digests.count
        while low < high {
            let middle = (low + high) / 2
            if digests[middle] < digest { low = middle + 1 } else { high = middle }
        }
        return low < digests.count && digests[low] == digest ? Int32(low) : nil
    }

    /// True when a catalog may not name a bundle by `url` (`CatalogError.invalidBundleURL`).
    package static func urlProblem(_ url: String) -> Bool {
        url.isEmpty || climbsOut(url) || (hasPercent(url) && BundleURL.climbsOutDecoded(url))
    }

    /// True when the UTF-8 bytes of a URL show without decoding that `urlProblem` is false: not
    /// empty, no `%`, no two dots in a row (so no `..` segment). Most URLs; the rest are decoded
    /// and checked by `urlProblem`.
    package static func urlIsPlainlySafe(_ bytes: RawSpan) -> Bool {
        let count = bytes.byteCount
        guard count > 0, RawBytes.firstIndex(of: UInt8(ascii: "%"), in: bytes, from: 0, to: count) == nil else { return false }
        let dot = UInt8(ascii: ".")
        var from = 0
        while let found = RawBytes.firstIndex(of: dot, in: bytes, from: from, to: count) {
            if found + 1 < count && RawBytes.firstIndex(of: dot, in: bytes, from: found + 1, to: found + 2) != nil { return false }
            from = found + 1
        }
        return true
    }

    /// True when a relative URL has a `..` component before any `?` or `#` (checked on bytes:
    /// catalogs hold many URLs).
    static func climbsOut(_ url: String) -> Bool {
        // Only a URL with two dots in a row can climb, and most have none: the dots are found
        // with `memchr` (a planet catalog's 16,000 URLs hold two each), the rest is never walked.
        let bytes = url.utf8.span
        let dot = UInt8(ascii: ".")
        var from = 0
        while let found = RawBytes.firstIndex(of: dot, in: bytes, from: from, to: bytes.count) {
            if found + 1 < bytes.count && bytes[found + 1] == dot { return climbsOut(Array(url.utf8)) }
            from = found + 1
        }
        return false
    }

    /// True when `url` holds a `%` (`memchr`, as `climbsOut`).
    private static func hasPercent(_ url: String) -> Bool {
        let bytes = url.utf8.span
        return RawBytes.firstIndex(of: UInt8(ascii: "%"), in: bytes, from: 0, to: bytes.count) != nil
    }

    private static func climbsOut(_ bytes: [UInt8]) -> Bool {
        // Length of the current component, and how many of its bytes are dots.
        var length = 0
        var dots = 0
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "/"):
                if length == 2 && dots == 2 { return true }
                (length, dots) = (0, 0)
            case UInt8(ascii: "?"), UInt8(ascii: "#"):
                return length == 2 && dots == 2
            case UInt8(ascii: "."):
                length += 1
                dots += 1
            default:
                length += 1
            }
        }
        return length == 2 && dots == 2
    }

    // MARK: Positions and numbers (for resolution and plans)

    /// The position of region `id` in `catalog.regions`.
    package func position(of id: RegionID) -> Int32? { index[id] }

    /// Positions of the children of the region at `position`, sorted by id.
    package func childPositions(of position: Int32) -> ArraySlice<Int32> {
        childPositions[Int(childStarts[Int(position)])..<Int(childStarts[Int(position) + 1])]
    }

    /// The catalog's entry for the bundle numbered `number`.
    package func bundleInfo(number: Int32) -> BundleInfo { catalog.bundles.values[bundleEntries[Int(number)]] }

    /// Numbers of the bundles the region at `position` lists, in its order.
    package func bundleNumbers(of position: Int32) -> ArraySlice<Int32> {
        regionBundles[Int(bundleStarts[Int(position)])..<Int(bundleStarts[Int(position) + 1])]
    }

    /// `position` and every region below it, depth first, parents before children.
    package func subtreePositions(_ position: Int32) -> [Int32] {
        var out: [Int32] = []
        var stack: [Int32] = [position]
        while let next = stack.popLast() {
            out.append(next)
            stack.append(contentsOf: childPositions(of: next).reversed())
        }
        return out
    }

    // MARK: Lookups

    /// All regions in catalog order.
    public var regions: [CatalogRegion] { catalog.regions }

    /// The region with `id`, if any.
    public func region(_ id: RegionID) -> CatalogRegion? { index[id].map { catalog.regions[Int($0)] } }

    /// Direct children of `id`, sorted.
    public func children(of id: RegionID) -> [RegionID] {
        guard let position = index[id] else { return [] }
        return childPositions(of: position).map { catalog.regions[Int($0)].id }
    }

    /// `id` and every region below it, depth first, parents before children.
    public func subtree(_ id: RegionID) -> [RegionID] {
        guard let position = index[id] else { return [id] }
        return subtreePositions(position).map { catalog.regions[Int($0)].id }
    }

    /// Bundles of the whole subtree of `id`, each once.
    public func subtreeBundles(_ id: RegionID) -> Set<BundleDigest> {
        guard let position = index[id] else { return [] }
        var out = Set<BundleDigest>()
        for member in subtreePositions(position) {
            for number in bundleNumbers(of: member) { out.insert(bundleDigests[Int(number)]) }
        }
        return out
    }

    /// The chain from a root down to `id`.
    public func ancestry(_ id: RegionID) -> [RegionID] {
        guard var position = index[id] else { return [id] }
        var chain: [RegionID] = [catalog.regions[Int(position)].id]
        while parentPositions[Int(position)] >= 0 {
            position = parentPositions[Int(position)]
            chain.append(catalog.regions[Int(position)].id)
        }
        return chain.reversed()
    }

    /// Compressed bytes of `bundles`, each counted once.
    public func downloadSize(_ bundles: Set<BundleDigest>) -> Int64 {
        bundles.reduce(0) { $0 + (catalog.bundles[$1]?.size ?? 0) }
    }

    /// Allocated bytes of `bundles` at `blockSize`, each counted once; nil when the catalog does
    /// not declare sizes on disk for that block size.
    public func sizeOnDisk(_ bundles: Set<BundleDigest>, blockSize: Int64) -> Int64? {
        var total: Int64 = 0
        for digest in bundles {
            guard let size = catalog.bundles[digest]?.sizeOnDisk(blockSize: blockSize) else { return nil }
            total += size
        }
        return total
    }
}
