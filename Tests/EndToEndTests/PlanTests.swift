import Foundation
import MapFormat
import TestSupport
import Testing

@Suite struct PlanTests {
    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test(arguments: [["europe/ch"], ["europe/ch/be", "Liechtenstein"], ["europe"]])
    func planSizesEqualWhatTheBuildProduces(_ include: [String]) throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog, include: include))
        let plan = try Tool.mappack(["plan", recipe, "--json", "--cache", world.cache])
        #expect(plan.status == 0, "\(plan.stderr)")
        let planned = try json(plan.stdout)
        #expect(planned["bundlesCached"] as? Int == 0)
        let build = try world.build(recipe)
        #expect(build.status == 0, "\(build.stderr)")
        let manifest = try world.manifest(world.out + "/fixture-1.0")
        // Per region and in total, the plan's sizes are the built image's.
        let regions = try #require(planned["regions"] as? [[String: Any]])
        #expect(regions.map { $0["id"] as! String } == manifest.regions.map(\.id.rawValue))
        for region in regions {
            #expect((region["sizeOnDiskInBytes"] as? Int).map(Int64.init) == manifest.region(RegionID(region["id"] as! String))?.sizeOnDiskInBytes)
        }
        let total = manifest.files.reduce(Int64(0)) { $0 + SizeOnDisk.allocated(size: $1.size, blockSize: 4096) }
        #expect((planned["sizeOnDiskInBytes"] as? Int).map(Int64.init) == total)
        let storeBytes = manifest.bundles.reduce(Int64(0)) { $0 + $1.size }
        let bundleList = try #require(planned["bundleList"] as? [[String: Any]])
        #expect(bundleList.filter { $0["forStore"] as? Bool == true }.reduce(Int64(0)) { $0 + Int64($1["size"] as! Int) } == storeBytes)
        // A second plan sees everything in the download cache.
        let again = try json(try Tool.mappack(["plan", recipe, "--json", "--cache", world.cache]).stdout)
        #expect(again["downloadBytes"] as? Int == 0)
    }

    /// The cache seed holds only what the store does not (issue 42 item 3): with `europe/ch` installed and
    /// `europe` seeded, no installed file is also a seed entry (read back with Debian's `sqlite3`), and the
    /// seed's data bytes are the plan's figure, which the free-space check uses.
    @Test func seedRepeatsNoInstalledFileAndItsSizeIsThePlans() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(
            SourceFixture.recipe(catalog: world.catalog, include: ["europe/ch"], seed: ["europe"]).replacingOccurrences(
                of: "  maxBytes: 1 MiB\n", with: ""))
        let plan = try json(try Tool.mappack(["plan", recipe, "--json", "--cache", world.cache]).stdout)
        let build = try world.build(recipe)
        #expect(build.status == 0, "\(build.stderr)")
        let image = world.out + "/fixture-1.0"
        let installed = Set(try world.manifest(image).files.map(\.path.string))
        let seed = image + "/cache-seed.sqlite"
        let keys = try Tool.run("/usr/bin/sqlite3", [seed, "SELECT key FROM entries ORDER BY key"])
        #expect(keys.status == 0, "\(keys.stderr)")
        let entries = keys.stdout.split(separator: "\n").map(String.init)
        #expect(!entries.isEmpty && entries.contains("regions/europe/li/tiles.db"), "\(entries)")
        #expect(entries.filter(installed.contains).isEmpty, "seed entries installed in store/ too: \(entries.filter(installed.contains))")
        let bytes = try Tool.run("/usr/bin/sqlite3", [seed, "SELECT SUM(size) FROM entries"])
        #expect(Int(bytes.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == plan["cacheSeedBytes"] as? Int, "\(bytes.stdout) \(plan)")
    }

    @Test func capacityOvershootFailsBeforeAnyDownload() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(
            SourceFixture.recipe(catalog: world.catalog, extra: "").replacingOccurrences(
                of: "  blockSize: 4096", with: "  blockSize: 4096\n  capacity: 40 KiB"))
        let plan = try Tool.mappack(["plan", recipe, "--cache", world.cache])
        #expect(plan.status == 1)
        #expect(plan.stderr.contains("over by"), "\(plan.stderr)")
        let build = try world.build(recipe)
        #expect(build.status == 1)
        #expect(build.stderr.contains("target.capacity"), "\(build.stderr)")
        // The error names the recipe whose capacity it is.
        #expect(build.stderr.contains(recipe + ": image needs") && plan.stderr.contains(recipe), "\(build.stderr)")
        #expect(!FileManager.default.fileExists(atPath: world.cache + "/sha256"))
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: world.out)) ?? []).filter { !$0.hasPrefix(".") }.isEmpty)
    }

    @Test func regionsListsTheTreeWithLocalizedNamesAndSubtreeSizes() throws {
        let world = try PublishedWorld()
        let result = try Tool.mappack(["regions", world.catalog, "--json", "--lang", "de-CH"])
        #expect(result.status == 0, "\(result.stderr)")
        let rows = try result.stdout.split(separator: "\n").map { try json(String($0)) }
        let byID = Dictionary(uniqueKeysWithValues: rows.map { ($0["id"] as! String, $0) })
        #expect(byID["europe/ch"]?["name"] as? String == "Schweiz")
        #expect(byID["europe/li"]?["name"] as? String == "Liechtenstein")
        #expect(byID["europe/ch"]?["children"] as? Int == 2)
        #expect(byID["europe/ch"]?["cities"] as? [String] == ["Bern", "Zürich"])
        // Subtree size on disk counts the shared border bundle once: 3000+20000+3+0+4097+9000+1+100 rounded.
        #expect(byID["europe/ch"]?["sizeOnDiskInBytes"] as? Int == 4096 + 20480 + 4096 + 0 + 8192 + 12288 + 4096 + 4096)
        let filtered = try Tool.mappack(["regions", world.catalog, "--filter", "zür", "--lang", "de"])
        #expect(filtered.stdout.contains("europe/ch/zh") && !filtered.stdout.contains("europe/li"))
        let tree = try Tool.mappack(["regions", world.catalog, "--tree"])
        #expect(tree.stdout.contains("\n    Bern"), "\(tree.stdout)")
    }
}
