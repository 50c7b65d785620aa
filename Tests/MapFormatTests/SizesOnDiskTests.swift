import Foundation
import MapFormat
import Testing

/// A digest whose hex starts with `number` (in its first, hashed word), zero-padded.
private func digest(_ number: Int) -> BundleDigest {
    let digits = String(number, radix: 16)
    return BundleDigest(hex: String(repeating: "0", count: 16 - digits.count) + digits + String(repeating: "0", count: 48))
}

private func region(_ id: String, _ parent: String?, _ bundles: [Int]) -> ImageRegion {
    ImageRegion(id: RegionID(id), parent: parent.map { RegionID($0) }, name: id, names: [:], bundles: bundles.map(digest), sizeOnDiskInBytes: 0)
}

@Suite struct SizesOnDiskTests {
    @Test func sharedBundlesCountOnceAndCyclesDoNotLoop() {
        let regions = [region("a", nil, [1]), region("a/b", "a", [2, 3]), region("a/c", "a", [3, 4]), region("x", "y", [5]), region("y", "x", [6])]
        let sizes = ImageManifest.sizesOnDisk(
            regions: regions, allocatedPerBundle: [digest(1): 1, digest(2): 10, digest(3): 100, digest(4): 1000, digest(5): 7, digest(6): 9])
        #expect(sizes[RegionID("a")] == 1111 && sizes[RegionID("a/b")] == 110 && sizes[RegionID("a/c")] == 1100)
        #expect(sizes[RegionID("x")] == 7 && sizes[RegionID("y")] == 9)
    }

    /// A chain of 100,000 regions, each with its own bundle: the old per-region subtree walk took
    /// 5 billion steps (35+ minutes); each region's size is the bytes of its own and all deeper bundles.
    @Test func deepChainIsDerivedInOnePass() {
        let depth = 100_000
        var regions: [ImageRegion] = []
        var perBundle: [BundleDigest: Int64] = [:]
        for level in 0..<depth {
            regions.append(region("r\(level)", level == 0 ? nil : "r\(level - 1)", [level]))
            perBundle[digest(level)] = 1
        }
        let sizes = ImageManifest.sizesOnDisk(regions: regions, allocatedPerBundle: perBundle)
        #expect(sizes[RegionID("r0")] == Int64(depth))
        #expect(sizes[RegionID("r\(depth - 1)")] == 1)
        #expect(sizes[RegionID("r50000")] == 50_000)
    }

    @Test func sizesThatOverflowSaturate() {
        let regions = [region("a", nil, [1, 2])]
        let sizes = ImageManifest.sizesOnDisk(regions: regions, allocatedPerBundle: [digest(1): Int64.max, digest(2): Int64.max])
        #expect(sizes[RegionID("a")] == Int64.max)
    }
}
