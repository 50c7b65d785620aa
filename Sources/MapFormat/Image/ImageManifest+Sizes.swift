extension ImageManifest {
    /// Recomputes each region's `sizeOnDiskInBytes` from `files`: every file rounded up to
    /// `blockSize`, over the region's subtree within the image, shared bundles once.
    public func derivedSizesOnDisk() -> [RegionID: Int64] {
        // A manifest comes from outside: a nonsensical block size must not divide by zero.
        guard blockSize > 0 else { return [:] }
        var perBundle: [BundleDigest: Int64] = [:]
        for file in files { perBundle[file.bundle, default: 0] += SizeOnDisk.allocated(size: file.size, blockSize: blockSize) }
        return ImageManifest.sizesOnDisk(regions: regions, allocatedPerBundle: perBundle)
    }

    /// Each region's size on disk from its bundles' allocated bytes: the region's subtree within
    /// `regions`, shared bundles counted once.
    public static func sizesOnDisk(regions: [ImageRegion], allocatedPerBundle perBundle: [BundleDigest: Int64]) -> [RegionID: Int64] {
        var children: [RegionID: [RegionID]] = [:]
        let ids = Set(regions.map(\.id))
        for region in regions { if let parent = region.parent, ids.contains(parent) { children[parent, default: []].append(region.id) } }
        let byID = Dictionary(regions.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var out: [RegionID: Int64] = [:]
        for region in regions {
            var bundles = Set<BundleDigest>()
            var stack = [region.id]
            var seen = Set<RegionID>()
            // `seen` also stops a parent cycle in a hostile manifest from looping forever.
            while let next = stack.popLast() {
                guard seen.insert(next).inserted else { continue }
                bundles.formUnion(byID[next]?.bundles ?? [])
                stack.append(contentsOf: children[next] ?? [])
            }
            out[region.id] = bundles.reduce(0) { $0 + (perBundle[$1] ?? 0) }
        }
        return out
    }

    /// Regions (ids) whose own bundles include `bundle`.
    public func regions(holding bundle: BundleDigest) -> [RegionID] {
        regions.filter { $0.bundles.contains(bundle) }.map(\.id)
    }
}
