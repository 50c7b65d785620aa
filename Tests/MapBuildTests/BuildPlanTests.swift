import Foundation
import MapFetch
import MapFormat
import TestSupport
import Testing

@testable import MapBuild

/// Plans over a small catalog whose figures were worked out by hand (and match what `mappack
/// plan` printed before plans were computed over region positions and bundle numbers).
@Suite struct BuildPlanTests {
    static func digest(_ n: Int) -> BundleDigest { BundleDigest(hex: String(repeating: String(n), count: 64)) }

    /// Europe with a bundle shared by two cantons (6), one shared across countries (7), a region
    /// listing one bundle twice (be: 4) and two regions named Bern.
    static func catalog(withSizesOnDisk: Bool = true) -> Catalog {
        func bundle(_ n: Int) -> BundleInfo {
            let size = Int64(n) * 1000
            let onDisk = withSizesOnDisk || n != 7 ? ["4096": size * 4, "512": size * 3] : nil
            return BundleInfo(url: "b/\(size).tar.zst", size: size, unpackedSize: size * 2, files: 1, kind: "tiles", sizeOnDisk: onDisk)
        }
        return Catalog(
            catalog: "c", mapVersion: MapVersion("1.0"), released: nil,
            regions: [
                CatalogRegion(id: "world", parent: nil, names: ["en": "World"], bundles: [digest(1)]),
                CatalogRegion(id: "europe", parent: nil, names: ["en": "Europe", "de": "Europa"], bundles: [digest(2)]),
                CatalogRegion(id: "europe/ch", parent: "europe", names: ["en": "Switzerland", "de": "Schweiz"], bundles: [digest(3)]),
                CatalogRegion(id: "europe/ch/be", parent: "europe/ch", names: ["en": "Bern"], bundles: [digest(4), digest(6), digest(4)]),
                CatalogRegion(id: "europe/ch/be/thun", parent: "europe/ch/be", names: ["en": "Thun"], bundles: [digest(5)]),
                CatalogRegion(id: "europe/ch/zh", parent: "europe/ch", names: ["en": "Zurich", "de": "Zürich"], bundles: [digest(7), digest(6)]),
                CatalogRegion(id: "europe/li", parent: "europe", names: ["en": "Liechtenstein"], bundles: [digest(8), digest(3)]),
                CatalogRegion(id: "europe/at", parent: "europe", names: ["en": "Austria"], bundles: [digest(9)]),
                CatalogRegion(id: "europe/at/be", parent: "europe/at", names: ["en": "Bern"], bundles: [digest(9), digest(7)]),
            ], bundles: Dictionary(uniqueKeysWithValues: (1...9).map { (digest($0), bundle($0)) }))
    }

    func plan(_ catalog: Catalog) throws -> BuildPlan {
        let folder = TemporaryFolder("plan")
        try CanonicalJSON.encode(catalog).write(to: URL(fileURLWithPath: folder.join("catalog.json")))
        let recipe = try Recipe.parse(
            Data(
                """
                name: t
                catalog: \(folder.join("catalog.json"))
                regions:
                  include: [europe/ch/zh, europe/ch, europe/at]
                  exclude: [europe/ch/be/thun]
                cacheSeed:
                  include: [world, Liechtenstein, europe/ch/be]
                  maxBytes: 20000
                """.utf8), file: folder.join("r.yaml"))
        return try BuildPlan.make(recipe: recipe, cache: DownloadCache(root: folder.join("cache")))
    }

    @Test func creditsEachBundleOnceToEverySelectedRegionThatUsesIt() throws {
        let plan = try plan(BuildPlanTests.catalog())
        #expect(plan.selection.regions.map(\.id.rawValue) == ["europe/at", "europe/at/be", "europe/ch", "europe/ch/be", "europe/ch/zh"])
        #expect(plan.selection.regions.map(\.broughtBy.rawValue) == ["europe/at", "europe/at", "europe/ch", "europe/ch", "europe/ch/zh"])
        let expected: [RegionID: Int64] = [
            "europe/at": 64000, "europe/at/be": 64000, "europe/ch": 80000, "europe/ch/be": 40000, "europe/ch/zh": 52000,
        ]
        #expect(plan.regionSizes == expected)
        #expect(plan.selectedRegionSizes == plan.selection.regions.map { expected[$0.id]! })
        #expect(plan.sizeOnDisk == 116000)
    }

    @Test func listsEveryBundleOnceWithItsUsersStoreFirst() throws {
        let plan = try plan(BuildPlanTests.catalog())
        #expect(plan.bundles.map(\.digest) == [1, 3, 4, 5, 6, 7, 8, 9].map(BuildPlanTests.digest))
        #expect(plan.bundles.map(\.forStore) == [false, true, true, false, true, true, false, true])
        #expect(
            plan.bundles.map { $0.regions.map(\.rawValue) } == [
                ["world"], ["europe/ch", "europe/li"], ["europe/ch/be"], ["europe/ch/be/thun"], ["europe/ch/be", "europe/ch/zh"],
                ["europe/at/be", "europe/ch/zh"], ["europe/li"], ["europe/at", "europe/at/be"],
            ])
        #expect(plan.bundles.allSatisfy { !$0.cached })
        #expect(plan.downloadBytes == 43000 && plan.totalBundleBytes == 43000)
        // Seed-only bundles 1, 5 and 8 unpack to 28000 bytes, capped by maxBytes.
        #expect(plan.cacheSeedBytes == 20000)
    }

    @Test func sizesAreUnknownWhenAStoreBundleLacksTheBlockSize() throws {
        let plan = try plan(BuildPlanTests.catalog(withSizesOnDisk: false))
        #expect(plan.sizeOnDisk == nil)
        #expect(plan.regionSizes.isEmpty)
        #expect(plan.selectedRegionSizes == nil)
        #expect(plan.bundles.count == 8)
    }
}
