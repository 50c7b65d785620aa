extension ImageManifest {
    /// Recomputes each region's `sizeOnDiskInBytes` from `files`: every file rounded up to
    /// `blockSize`, over the region's subtree within the image, shared bundles once.
    public func derivedSizesOnDisk() -> [RegionID: Int64] {
        // A manifest comes from outside: a nonsensical block size must not divide by zero.
        guard blockSize > 0 else { return [:] }
        var perBundle: [BundleDigest: Int64] = [:]
        for file in files {
            // Saturating: absurd sizes in a hostile manifest give a size that fails verification, not a trap.
            let allocated = file.size > Int64.max - blockSize ? Int64.max : SizeOnDisk.allocated(size: file.size, blockSize: blockSize)
            perBundle[file.bundle, default: 0] = ImageManifest.saturatingSum(perBundle[file.bundle, default: 0], allocated)
        }
        return ImageManifest.sizesOnDisk(regions: regions, allocatedPerBundle: perBundle)
    }

    /// Each region's size on disk from its bundles' allocated bytes: the region's subtree within
    /// `regions`, shared bundles counted once.
    ///
    /// Children before parents, each region takes over its largest child's bundle set and adds the
    /// others' (small into large), so every bundle is inserted O(log n) times: a chain of 100,000
    /// regions costs 100,000 steps, not 5 billion. A region that no root reaches (a parent cycle in
    /// a hostile manifest) counts its own bundles only.
    public static func sizesOnDisk(regions: [ImageRegion], allocatedPerBundle perBundle: [BundleDigest: Int64]) -> [RegionID: Int64] {
        var position: [RegionID: Int] = [:]
        position.reserveCapacity(regions.count)
        for index in regions.indices where position[regions[index].id] == nil { position[regions[index].id] = index }
        var children = [[Int]](repeating: [], count: regions.count)
        var roots: [Int] = []
        for index in regions.indices where position[regions[index].id] == index {
            if let parent = regions[index].parent, let parentIndex = position[parent], parentIndex != index {
                children[parentIndex].append(index)
            } else {
                roots.append(index)
            }
        }
        // Parents before children (each region once: it has one parent), walked without recursion.
        var order: [Int] = []
        order.reserveCapacity(regions.count)
        var stack = roots
        var placed = [Bool](repeating: false, count: regions.count)
        while let next = stack.popLast() {
            guard !placed[next] else { continue }
            placed[next] = true
            order.append(next)
            stack.append(contentsOf: children[next])
        }
        // Each distinct bundle becomes a small number once, with its bytes: the sets below hash and
        // compare those, not 32-byte digests (a continent's regions insert tens of thousands).
        var number: [BundleDigest: Int] = [:]
        var bytes: [Int64] = []
        let bundlesOf = regions.map { region in
            region.bundles.map { bundle in
                if let known = number[bundle] { return known }
                number[bundle] = bytes.count
                bytes.append(perBundle[bundle] ?? 0)
                return bytes.count - 1
            }
        }
        var sets = [Set<Int>](repeating: [], count: regions.count)
        var totals = [Int64](repeating: 0, count: regions.count)
        var out: [RegionID: Int64] = [:]
        out.reserveCapacity(position.count)
        for index in order.reversed() {
            var largest = -1
            for child in children[index] where largest < 0 || sets[child].count > sets[largest].count { largest = child }
            var set: Set<Int> = []
            var total: Int64 = 0
            if largest >= 0 {
                swap(&set, &sets[largest])
                total = totals[largest]
            }
            for child in children[index] where child != largest {
                for bundle in sets[child] where set.insert(bundle).inserted { total = saturatingSum(total, bytes[bundle]) }
                sets[child] = []
            }
            for bundle in bundlesOf[index] where set.insert(bundle).inserted { total = saturatingSum(total, bytes[bundle]) }
            sets[index] = set
            totals[index] = total
            out[regions[index].id] = total
        }
        for (id, index) in position where !placed[index] {
            out[id] = Set(regions[index].bundles).reduce(0) { saturatingSum($0, perBundle[$1] ?? 0) }
        }
        return out
    }

    /// `a + b`, or `Int64.max` where that overflows (sizes from a hostile manifest).
    static func saturatingSum(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b < 0 ? Int64.min : Int64.max) : sum
    }

    /// Regions (ids) whose own bundles include `bundle`.
    public func regions(holding bundle: BundleDigest) -> [RegionID] {
        regions.filter { $0.bundles.contains(bundle) }.map(\.id)
    }
}
