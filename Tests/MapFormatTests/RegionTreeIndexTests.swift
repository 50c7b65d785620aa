import Foundation
import MapFormat
import Testing

/// The tree's lookups, now answered from region positions and bundle numbers, and the order in
/// which validation reports the first of several problems.
@Suite struct RegionTreeIndexTests {
    let tree = try! RegionTree(sampleCatalog())
    static func digest(_ n: Int) -> BundleDigest { BundleDigest(hex: String(repeating: String(n), count: 64)) }

    @Test func answersTreeQueries() {
        #expect(tree.roots == ["europe", "world"])
        #expect(tree.children(of: "europe") == ["europe/at", "europe/ch", "europe/li"])
        #expect(tree.children(of: "europe/ch/be/thun").isEmpty && tree.children(of: "nowhere").isEmpty)
        #expect(tree.subtree("europe/ch") == ["europe/ch", "europe/ch/be", "europe/ch/be/thun", "europe/ch/zh"])
        #expect(tree.subtree("nowhere") == ["nowhere"])
        #expect(tree.ancestry("europe/ch/be/thun") == ["europe", "europe/ch", "europe/ch/be", "europe/ch/be/thun"])
        #expect(tree.ancestry("world") == ["world"] && tree.ancestry("nowhere") == ["nowhere"])
        #expect(tree.subtreeBundles("europe/ch") == Set([3, 4, 5, 6, 7].map(RegionTreeIndexTests.digest)))
        #expect(tree.subtreeBundles("nowhere").isEmpty)
        #expect(tree.region("europe/li")?.names["en"] == "Liechtenstein" && tree.region("nowhere") == nil)
        #expect(tree.downloadSize(Set([1, 2].map(RegionTreeIndexTests.digest))) == 3000)
    }

    @Test func resolutionListsBundlesSortedAndKeepsTheSelectorsSpelling() throws {
        let selection = try tree.resolve(include: [RegionSelector("europe/at"), RegionSelector("Liechtenstein")], exclude: [])
        #expect(selection.regions.map(\.id.rawValue) == ["europe/at", "europe/at/be", "europe/li"])
        #expect(selection.regions.map(\.broughtBy.rawValue) == ["europe/at", "europe/at", "europe/li"])
        #expect(selection.bundles == [8, 9].map(RegionTreeIndexTests.digest))
        #expect(try tree.resolve(include: [RegionSelector("europe/ch")], exclude: [RegionSelector("europe/ch")]) == .empty)
    }

    @Test(arguments: [
        ("b/../x", true), ("..", true), ("a/..", true), ("../a", true), ("a/..?x", true), ("a/..#x", true),
        ("a/...", false), ("a/..b", false), ("a?../..", false), ("a#/../", false), (".a./.b.", false), ("a/./b", false),
        ("x..y/z", false), ("bundles/00/0a.tar.zst", false), ("", false), (".", false),
    ])
    func bundleURLsThatClimbOutAreRefused(_ url: String, _ climbs: Bool) {
        let digest = RegionTreeIndexTests.digest(1)
        let result = Result { try RegionTree(sampleCatalog { $0.bundles[digest]!.url = url }) }
        if url.isEmpty || climbs {
            #expect(throws: CatalogError.invalidBundleURL(bundle: digest, url: url)) { try result.get() }
        } else {
            #expect((try? result.get()) != nil)
        }
    }

    @Test func reportsTheFirstBadBundleInDigestOrderAndItsFirstBadField() {
        #expect(throws: CatalogError.invalidSize(bundle: RegionTreeIndexTests.digest(3), field: "unpackedSize", value: -1)) {
            try RegionTree(
                sampleCatalog {
                    $0.bundles[RegionTreeIndexTests.digest(8)]!.size = -1
                    $0.bundles[RegionTreeIndexTests.digest(3)]!.unpackedSize = -1
                    $0.bundles[RegionTreeIndexTests.digest(3)]!.url = "../x"
                    $0.bundles[RegionTreeIndexTests.digest(5)]!.files = -2
                })
        }
    }

    @Test func reportsProblemsInTheOrderOfTheirKinds() {
        // A duplicate id comes before bundle problems, which come before names, parents and cycles.
        #expect(throws: CatalogError.duplicateRegion("europe/li")) {
            try RegionTree(
                sampleCatalog {
                    $0.regions.append($0.regions[6])
                    $0.bundles[RegionTreeIndexTests.digest(2)]!.size = -1
                })
        }
        #expect(throws: CatalogError.missingBundle(region: "europe/ch", bundle: RegionTreeIndexTests.digest(0))) {
            try RegionTree(
                sampleCatalog {
                    $0.regions[2].bundles.append(RegionTreeIndexTests.digest(0))
                    $0.regions[4].parent = "nowhere"
                })
        }
        #expect(throws: CatalogError.parentCycle(["europe/ch", "europe/ch/be", "europe/ch"])) {
            try RegionTree(
                sampleCatalog {
                    $0.regions[2].parent = "europe/ch/be"
                    $0.regions[7].parent = "europe/at/be"
                })
        }
    }

    @Test func warnsAboutUnreferencedBundlesInDigestOrder() throws {
        let tree = try RegionTree(
            sampleCatalog {
                for n in [0, 1] {
                    $0.bundles[BundleDigest(hex: String(repeating: "e", count: 63) + String(n))] = BundleInfo(
                        url: "x", size: 1, unpackedSize: 1, files: 1, kind: nil)
                }
                $0.regions[0].bundles = []
            })
        #expect(
            tree.warnings
                == [
                    RegionTreeIndexTests.digest(1), BundleDigest(hex: String(repeating: "e", count: 63) + "0"),
                    BundleDigest(hex: String(repeating: "e", count: 63) + "1"),
                ].map { .unreferencedBundle($0) })
    }
}
