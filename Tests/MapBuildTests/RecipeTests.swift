import Foundation
import MapFormat
import TestSupport
import Testing

@testable import MapBuild

@Suite struct RecipeTests {
    func parse(_ text: String) throws -> Recipe { try Recipe.parse(Data(text.utf8), file: "/recipes/r.yaml") }

    @Test func readsEveryField() throws {
        let recipe = try parse(
            """
            name: europe
            catalog: ../Output/demo-world/2026.11.0/catalog.json
            mapVersion: 2026.11.0
            language: de
            regions:
              include: [europe, Schweiz]
              exclude: [europe/ru]
            cacheSeed:
              include: [world]
              maxBytes: 64 MiB
            target:
              blockSize: 4096
              capacity: 32 GiB
            output:
              formats: [directory, tar.zst]
            """)
        #expect(recipe.name == "europe")
        #expect(recipe.catalogURL.path == "/Output/demo-world/2026.11.0/catalog.json")
        #expect(recipe.mapVersion == MapVersion("2026.11.0"))
        #expect(recipe.include.map(\.text) == ["europe", "Schweiz"])
        #expect(recipe.include[1].location == "/recipes/r.yaml:6:21")
        #expect(recipe.exclude.map(\.text) == ["europe/ru"])
        #expect(recipe.cacheSeedMaxBytes == 64 << 20)
        #expect(recipe.capacity == 32 << 30)
        #expect(recipe.formats == [.directory, .tarZst])
    }

    @Test(arguments: ["de", "de-CH", "pt-BR", "zh-Hant", "zh-Hant-TW", "sr-Latn", "es-419"])
    func acceptsLanguageTags(_ tag: String) throws {
        #expect(try parse("name: x\ncatalog: c.json\nlanguage: \(tag)\nregions:\n  include: [a]\n").language == tag)
    }

    @Test func defaultsWhenOptionalKeysAreAbsent() throws {
        let recipe = try parse("name: x\ncatalog: https://maps.example.com/catalog.json\nregions:\n  include: [a]\n")
        #expect(recipe.catalogURL.absoluteString == "https://maps.example.com/catalog.json")
        #expect(recipe.blockSize == 4096)
        #expect(recipe.formats == [.directory])
        #expect(recipe.cacheSeedInclude.isEmpty && recipe.capacity == nil && recipe.mapVersion == nil)
    }

    @Test(arguments: [
        ("name: x\ncatalog: c.json\nregions:\n  include: [a]\nouput:\n  formats: [directory]\n", 5, 1, "did you mean 'output'"),
        ("name: x\ncatalog: c.json\nregions:\n  include: [a]\ntarget:\n  blockSize: 3000\n", 6, 14, "power of two"),
        ("name: x\ncatalog: c.json\nregions:\n  include: [a]\ncacheSeed:\n  maxBytes: lots\n", 6, 13, "not a size"),
        ("name: x\ncatalog: c.json\nregions:\n  include: [a]\noutput:\n  formats: [zip]\n", 6, 13, "unknown output format"),
        ("name: x y\ncatalog: c.json\nregions:\n  include: [a]\n", 1, 7, "may use only"),
        ("name: x\ncatalog: ftp://host/c.json\nregions:\n  include: [a]\n", 2, 10, "scheme not supported"),
        ("name: x\ncatalog: c.json\nregions:\n  include: []\n", 4, 3, "lists no region"),
        ("name: x\nname: y\ncatalog: c.json\nregions:\n  include: [a]\n", 2, 1, "appears twice"),
        ("name: x\ncatalog: c.json\nlanguage: 42\nregions:\n  include: [a]\n", 3, 11, "not a language tag"),
        ("name: x\ncatalog: c.json\nlanguage: \"xx-!!\"\nregions:\n  include: [a]\n", 3, 11, "not a language tag"),
        // YAML's null and booleans, and 4 letters or more (no language has such a code): not languages.
        ("name: x\ncatalog: c.json\nlanguage: true\nregions:\n  include: [a]\n", 3, 11, "not a language tag"),
        ("name: x\ncatalog: c.json\nlanguage: null\nregions:\n  include: [a]\n", 3, 11, "not a language tag"),
        ("name: x\ncatalog: c.json\nlanguage: False\nregions:\n  include: [a]\n", 3, 11, "not a language tag"),
        ("name: x\ncatalog: c.json\nlanguage: english\nregions:\n  include: [a]\n", 3, 11, "not a language tag"),
    ])
    func refusesBadRecipesWithLineAndColumn(_ text: String, _ line: Int, _ column: Int, _ message: String) {
        #expect {
            _ = try parse(text)
        } throws: { error in
            guard let error = error as? RecipeError else { return false }
            return error.line == line && error.column == column && error.message.contains(message)
        }
    }
}

@Suite struct ShardAssignmentTests {
    func plannedBundles(_ sizes: [Int64]) -> [BuildPlan.PlannedBundle] {
        sizes.enumerated().map { index, size in
            let hex = String(format: "%064x", index + 1)
            return BuildPlan.PlannedBundle(
                digest: BundleDigest(hex: hex), info: BundleInfo(url: "b", size: size, unpackedSize: size, files: 1, kind: nil),
                regions: [], forStore: true, cached: false)
        }
    }

    @Test(arguments: [1, 2, 3, 5])
    func everyBundleLandsInExactlyOneShardAndShardsAreBalanced(_ count: Int) {
        let bundles = plannedBundles((0..<200).map { Int64(($0 * 7919) % 1000 + 10) })
        let shards = (1...count).map { ShardAssignment.bundles(bundles, index: $0, count: count) }
        let all = shards.flatMap { $0.map(\.digest) }
        #expect(all.count == bundles.count)
        #expect(Set(all) == Set(bundles.map(\.digest)))
        let loads = shards.map { $0.reduce(Int64(0)) { $0 + $1.info.size } }
        // Greedy largest-first keeps every shard within the largest bundle of the mean.
        let mean = Double(loads.reduce(0, +)) / Double(count)
        #expect(loads.allSatisfy { abs(Double($0) - mean) <= 1010 })
        // Every runner computes the same split, whatever order the plan lists bundles in.
        #expect(ShardAssignment.bundles(bundles.reversed(), index: 1, count: count).map(\.digest).sorted() == shards[0].map(\.digest).sorted())
    }
}

@Suite struct PublisherTests {
    @Test func publishingTwiceGivesIdenticalBytes() async throws {
        let folder = TemporaryFolder("publish")
        try SourceFixture.write(to: folder.join("src"))
        _ = try await Publisher(source: folder.join("src"), output: folder.join("a"), jobs: 1).run()
        _ = try await Publisher(source: folder.join("src"), output: folder.join("b"), jobs: 4).run()
        let diff = try Tool.run("/usr/bin/diff", ["-r", folder.join("a"), folder.join("b")])
        #expect(diff.status == 0, "\(diff.stdout)")
        let catalog = try CanonicalJSON.decode(
            Catalog.self, from: Data(contentsOf: URL(fileURLWithPath: folder.join("a/catalog.json"))), file: "catalog.json")
        let tree = try RegionTree(catalog)
        #expect(tree.roots == ["europe", "world"])
        // Declared sizes on disk match the fixture's file sizes rounded to 4 KiB.
        let be = try #require(tree.region("europe/ch/be"))
        let tiles = try #require(catalog.bundles[be.bundles[0]])
        #expect(tiles.sizeOnDisk(blockSize: 4096) == Int64(20480 + 4096 + 0))
        #expect(tiles.files == 3)
    }

    @Test func refusesAPathInTwoBundles() async throws {
        let folder = TemporaryFolder("publish-dup")
        try SourceFixture.write(to: folder.join("src"))
        let clash = folder.join("src/bundles/li/regions/europe/ch/overview.db")
        try FileManager.default.createDirectory(atPath: (clash as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: clash))
        await #expect {
            _ = try await Publisher(source: folder.join("src"), output: folder.join("out")).run()
        } throws: { error in
            "\(error)".contains("regions/europe/ch/overview.db") && "\(error)".contains("'ch'") && "\(error)".contains("'li'")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.join("out")))
    }
}
