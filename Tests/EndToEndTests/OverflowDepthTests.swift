import Foundation
import TestSupport
import Testing

/// Sizes that add up past 64 bits, region chains deeper than the cap, deeply nested YAML: each a
/// clear error with exit 2, never a trap or a hang.
@Suite struct OverflowDepthTests {
    /// A digest-shaped key for bundle `number` (in the first, hashed word).
    static func hex(_ number: Int) -> String {
        let digits = String(number, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits + String(repeating: "0", count: 48)
    }

    /// A catalog with one root region `r` that lists `count` bundles of `size` bytes each.
    static func manyBundles(count: Int, size: String, sizeOnDisk: String? = nil) -> String {
        let refs = (0..<count).map { "\"sha256:\(hex($0))\"" }.joined(separator: ",")
        let table = sizeOnDisk.map { ",\"sizeOnDisk\":{\"4096\":\($0)}" } ?? ""
        let bundles = (0..<count).map { "\"sha256:\(hex($0))\":{\"url\":\"b/\($0).tar.zst\",\"size\":\(size),\"unpackedSize\":1\(table)}" }.joined(
            separator: ",")
        return """
            {"format":"mappack-catalog/1","catalog":"c","mapVersion":"1.0","regions":[{"id":"r","parent":null,"names":{"en":"R"},"bundles":[\(refs)]}],
             "bundles":{\(bundles)}}
            """
    }

    /// A chain `r0` ← `r1` ← … `r(depth-1)`, each with no bundles.
    static func chain(depth: Int) -> String {
        var regions: [String] = []
        regions.reserveCapacity(depth)
        for level in 0..<depth {
            let parent = level == 0 ? "null" : "\"r\(level - 1)\""
            regions.append("{\"id\":\"r\(level)\",\"parent\":\(parent),\"names\":{\"en\":\"R\(level)\"},\"bundles\":[]}")
        }
        return
            "{\"format\":\"mappack-catalog/1\",\"catalog\":\"c\",\"mapVersion\":\"1.0\",\"regions\":[\(regions.joined(separator: ","))],\"bundles\":{}}"
    }

    static let hugeCatalogs: [(String, String)] = [
        ("sum of sizes", manyBundles(count: 8200, size: String(1 << 50))),
        ("sizeOnDisk Int64.max", manyBundles(count: 2, size: "1", sizeOnDisk: String(Int64.max))),
        ("sum of sizeOnDisk", manyBundles(count: 8200, size: "1", sizeOnDisk: String(1 << 50))),
        ("negative sizeOnDisk", manyBundles(count: 1, size: "1", sizeOnDisk: "-4096")),
        ("negative size", manyBundles(count: 1, size: "-1")),
    ]

    @Test(arguments: 0..<hugeCatalogs.count)
    func sizesPastSixtyFourBitsAreRefusedByEveryVerb(_ index: Int) throws {
        let (label, text) = Self.hugeCatalogs[index]
        let folder = TemporaryFolder("overflow")
        try Data(text.utf8).write(to: URL(fileURLWithPath: folder.join("catalog.json")))
        try Data("name: x\ncatalog: catalog.json\nregions:\n  include: [r]\n".utf8).write(to: URL(fileURLWithPath: folder.join("r.yaml")))
        let runs = [
            try Tool.mappack(["regions", folder.join("catalog.json"), "--tree"]),
            try Tool.mappack(["plan", folder.join("r.yaml")]),
            try Tool.mappack(["build", folder.join("r.yaml"), "--cache", folder.join("cache"), "--out", folder.join("Output")]),
        ]
        for result in runs {
            #expect(result.status == 2, "\(label): \(result.stderr)")
            #expect(result.stderr.contains("add up to more than") || result.stderr.contains("negative or absurd"), "\(label): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.join("Output/x-1.0")))
    }

    @Test func storeNeverTakesACatalogWhoseSizesOverflow() throws {
        let world = try PublishedWorld()
        #expect(try world.build(try world.recipe(SourceFixture.recipe(catalog: world.catalog))).status == 0)
        let storage = world.folder.join("storage")
        let cache = world.folder.join("device-cache")
        let install = try Tool.mappack(["store", "install", "--storage", storage, "--cache", cache, "--image", world.out + "/fixture-1.0"])
        #expect(install.status == 0, "\(install.stderr)")
        try Data(Self.manyBundles(count: 8200, size: String(1 << 50)).utf8).write(to: URL(fileURLWithPath: world.folder.join("huge.json")))
        let available = try Tool.mappack(["store", "available", "--storage", storage, "--cache", cache, "--catalog", world.folder.join("huge.json")])
        // A catalog file named on the command line is input: a bad one exits 2.
        #expect(available.status == 2, "\(available.stderr)")
        #expect(available.stderr.contains("add up to more than"), "\(available.stderr)")
        // The store did not keep it: a later call without a catalog finds none known (bad usage, 2),
        // not the refused one.
        let later = try Tool.mappack(["store", "available", "--storage", storage, "--cache", cache])
        #expect(later.status == 2, "\(later.stderr)")
        #expect(!later.stderr.contains("add up to more than") && later.stderr.contains("--catalog"), "\(later.stderr)")
    }

    @Test func regionChainDeeperThanTheCapIsRefused() throws {
        let folder = TemporaryFolder("deep-chain")
        try Data(Self.chain(depth: 100_000).utf8).write(to: URL(fileURLWithPath: folder.join("catalog.json")))
        let result = try Tool.run("/usr/bin/timeout", ["60", Tool.path("mappack"), "regions", folder.join("catalog.json"), "--tree"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("'r64'") && result.stderr.contains("64 levels"), "\(result.stderr)")
    }

    @Test func regionChainAtTheCapIsShownAsATree() throws {
        let folder = TemporaryFolder("cap-chain")
        try Data(Self.chain(depth: 64).utf8).write(to: URL(fileURLWithPath: folder.join("catalog.json")))
        let result = try Tool.mappack(["regions", folder.join("catalog.json"), "--tree"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(String(repeating: "  ", count: 63) + "R63"), "\(result.stdout.suffix(500))")
    }

    /// `timeout` only guards against a hang (it would exit 124); the assertion is the exit code and
    /// the message.
    @Test(arguments: ["[", "{"])
    func deeplyNestedFlowYAMLFailsWithItsLocation(_ open: String) throws {
        let folder = TemporaryFolder("deep-yaml")
        let text = "name: x\ncatalog: c.json\nregions:\n  include: " + String(repeating: open, count: 200_000) + "\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: folder.join("r.yaml")))
        let result = try Tool.run("/usr/bin/timeout", ["20", Tool.path("mappack"), "plan", folder.join("r.yaml")])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("r.yaml:4:") && result.stderr.contains("nesting deeper than 64 levels"), "\(result.stderr)")
    }
}
