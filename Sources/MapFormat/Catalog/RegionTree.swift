/// A validated catalog with its region tree indexed for lookups and resolution.
public struct RegionTree: Sendable {
    /// The catalog the tree was built from.
    public let catalog: Catalog
    /// Findings that do not stop a build.
    public let warnings: [CatalogWarning]
    /// Region index by id.
    private let index: [RegionID: Int]
    /// Children per region, sorted by id.
    private let childIDs: [RegionID: [RegionID]]
    /// Roots, sorted by id.
    public let roots: [RegionID]

    /// Largest size a catalog may declare for one bundle before it is taken as absurd.
    public static let absurdSize: Int64 = 1 << 50

    /// Validates `catalog`: format major, unique ids, existing parents, no cycles, existing bundles, sane sizes.
    public init(_ catalog: Catalog) throws(CatalogError) {
        do { try FormatTagError.check(catalog.format, expected: Catalog.formatTag) } catch { throw .format(error) }
        var index: [RegionID: Int] = [:]
        index.reserveCapacity(catalog.regions.count)
        for (i, region) in catalog.regions.enumerated() {
            if region.id.rawValue.isEmpty { throw .emptyRegionID }
            if index[region.id] != nil { throw .duplicateRegion(region.id) }
            index[region.id] = i
        }
        for (digest, info) in catalog.bundles.sorted(by: { $0.key < $1.key }) {
            for (field, value) in [("size", info.size), ("unpackedSize", info.unpackedSize), ("files", Int64(info.files ?? 0))]
            where value < 0 || value > RegionTree.absurdSize {
                throw .invalidSize(bundle: digest, field: field, value: value)
            }
            if info.url.isEmpty || RegionTree.climbsOut(info.url) { throw .invalidBundleURL(bundle: digest, url: info.url) }
        }
        var children: [RegionID: [RegionID]] = [:]
        var roots: [RegionID] = []
        var referenced = Set<BundleDigest>()
        for region in catalog.regions {
            if region.names.isEmpty { throw .noNames(region: region.id) }
            for bundle in region.bundles {
                guard catalog.bundles[bundle] != nil else { throw .missingBundle(region: region.id, bundle: bundle) }
                referenced.insert(bundle)
            }
            if let parent = region.parent {
                guard index[parent] != nil else { throw .unknownParent(region: region.id, parent: parent) }
                children[parent, default: []].append(region.id)
            } else {
                roots.append(region.id)
            }
        }
        // Every region must reach a root; a region that does not sits on a cycle.
        var reachesRoot = Set(roots)
        for region in catalog.regions where !reachesRoot.contains(region.id) {
            var chain: [RegionID] = [region.id]
            var seen: Set<RegionID> = [region.id]
            var current = region.id
            while let parent = catalog.regions[index[current]!].parent, !reachesRoot.contains(parent) {
                if seen.contains(parent) {
                    let start = chain.firstIndex(of: parent)!
                    throw .parentCycle(Array(chain[start...]) + [parent])
                }
                seen.insert(parent); chain.append(parent); current = parent
            }
            reachesRoot.formUnion(chain)
        }
        for key in children.keys { children[key]!.sort() }
        self.catalog = catalog
        self.index = index
        self.childIDs = children
        self.roots = roots.sorted()
        self.warnings = catalog.bundles.keys.filter { !referenced.contains($0) }.sorted().map { .unreferencedBundle($0) }
    }

    /// True when a relative URL has a `..` component (checked on bytes: catalogs hold many URLs).
    static func climbsOut(_ url: String) -> Bool {
        // The last three bytes seen, with the string's start acting as a '/'.
        var (a, b, c): (UInt8, UInt8, UInt8) = (47, 47, 47)
        for byte in url.utf8 {
            if byte == 47 || byte == 63 || byte == 35 {
                if a == 47 && b == 46 && c == 46 { return true }
                if byte != 47 { return false }
            }
            (a, b, c) = (b, c, byte)
        }
        return a == 47 && b == 46 && c == 46
    }

    /// All regions in catalog order.
    public var regions: [CatalogRegion] { catalog.regions }

    /// The region with `id`, if any.
    public func region(_ id: RegionID) -> CatalogRegion? { index[id].map { catalog.regions[$0] } }

    /// Direct children of `id`, sorted.
    public func children(of id: RegionID) -> [RegionID] { childIDs[id] ?? [] }

    /// `id` and every region below it, depth first, parents before children.
    public func subtree(_ id: RegionID) -> [RegionID] {
        var out: [RegionID] = []
        var stack: [RegionID] = [id]
        while let next = stack.popLast() {
            out.append(next)
            stack.append(contentsOf: children(of: next).reversed())
        }
        return out
    }

    /// Bundles of the whole subtree of `id`, each once.
    public func subtreeBundles(_ id: RegionID) -> Set<BundleDigest> {
        var out = Set<BundleDigest>()
        for member in subtree(id) { out.formUnion(region(member)?.bundles ?? []) }
        return out
    }

    /// The chain from a root down to `id`.
    public func ancestry(_ id: RegionID) -> [RegionID] {
        var chain: [RegionID] = []
        var current: RegionID? = id
        while let next = current { chain.append(next); current = region(next)?.parent }
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
