import Foundation
import MapFormat
import TestSupport
import Testing

/// The small things a new user trips over (issue 19 item 9), through the real binary.
@Suite struct PapercutTests {
    /// A published fixture catalog, a built image and a device store installed from it.
    final class InstalledWorld: @unchecked Sendable {
        let world: PublishedWorld
        var storage: String { world.folder.join("device/maps") }
        var cache: String { world.folder.join("device/cache") }

        init() throws {
            world = try PublishedWorld()
            let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
            let build = try world.build(recipe)
            precondition(build.status == 0, build.stderr)
            let install = try store(["install", "--image", world.out + "/fixture-1.0.tar.zst"])
            precondition(install.status == 0, install.stderr)
        }

        func store(_ arguments: [String]) throws -> Tool.Result {
            try Tool.mappack(["store"] + arguments + ["--storage", storage, "--cache", cache])
        }
    }

    /// True when the table's columns line up: the header's columns (split at two or more spaces)
    /// are separated, on every line, by runs of at least two spaces at the same positions.
    static func aligned(_ lines: [Substring]) -> Bool {
        guard let header = lines.first else { return false }
        let columns = header.split(separator: "  ", omittingEmptySubsequences: true).count
        let rows = lines.map(Array.init)
        let width = rows.map(\.count).max() ?? 0
        let blank = (0..<width).map { position in rows.allSatisfy { position >= $0.count || $0[position] == " " } }
        var runs = 0
        var length = 0
        for position in 0..<width {
            if blank[position] {
                length += 1
            } else {
                if length >= 2 { runs += 1 }
                length = 0
            }
        }
        return runs == columns - 1
    }

    @Test func aFolderGivenAsRecipeNamesItOnce() throws {
        let folder = TemporaryFolder("recipe-folder")
        try FileManager.default.createDirectory(atPath: folder.join("recipes"), withIntermediateDirectories: true)
        for verb in ["build", "plan"] {
            let result = try Tool.mappack([verb, folder.join("recipes")] + (verb == "build" ? ["--out", folder.join("out")] : []))
            #expect(result.status == 2, "\(result.stderr)")
            #expect(result.stderr.components(separatedBy: folder.join("recipes")).count == 2, "path repeated: \(result.stderr)")
            #expect(result.stderr.contains("folder"), "\(result.stderr)")
        }
    }

    @Test func anExcludeOutsideTheIncludesIsWarnedAbout() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog, include: ["europe/ch"], exclude: ["europe/li", "europe/ch/zh"]))
        for verb in ["plan", "build"] {
            let result = try Tool.mappack(
                [verb, recipe, "--cache", world.cache] + (verb == "build" ? ["--out", world.out] : []),
                environment: ["SOURCE_DATE_EPOCH": "1790000000"])
            #expect(result.status == 0, "\(result.stderr)")
            // Named with the recipe's file:line and the region; the exclude that does remove something is not.
            #expect(result.stderr.contains("recipe.yaml:7") && result.stderr.contains("europe/li"), "\(verb): \(result.stderr)")
            #expect(!result.stderr.contains("europe/ch/zh"), "\(verb): \(result.stderr)")
        }
    }

    @Test func aCorruptedStoreSaysHowToRepairIt() throws {
        let device = try InstalledWorld()
        try FileManager.default.removeItem(atPath: device.storage + "/store/regions/europe/ch/be/tiles.db")
        let status = try device.store(["status"])
        #expect(status.status == 1)
        #expect(status.stdout.hasPrefix("corrupted"), "\(status.stdout)")
        #expect((status.stdout + status.stderr).contains("mappack store repair --image"), "\(status.stdout)\(status.stderr)")
    }

    @Test func regionTablesAreAligned() throws {
        let device = try InstalledWorld()
        #expect(try device.store(["delete", "europe/ch/zh"]).status == 0)
        for (name, result) in [
            ("regions", try Tool.mappack(["regions", device.world.catalog])),
            ("regions --tree", try Tool.mappack(["regions", device.world.catalog, "--tree"])),
            ("store regions", try device.store(["regions"])),
            ("store available", try device.store(["available", "--catalog", device.world.catalog])),
        ] {
            #expect(result.status == 0, "\(name): \(result.stderr)")
            let lines = result.stdout.split(separator: "\n")
            #expect(lines.count >= 2, "\(name): \(result.stdout)")
            #expect(
                lines.first?.hasPrefix("REGION  ") == true && lines.first!.split(separator: "  ").count >= 4,
                "\(name) has no header: \(result.stdout)")
            #expect(PapercutTests.aligned(lines), "\(name) is not aligned:\n\(result.stdout)")
        }
    }

    /// Names whose terminal cells are not their characters (issue 43: columns were counted in
    /// characters): CJK, emoji drawn as pictures, a flag, halfwidth kana. Every
    /// column after a name starts at one cell in `regions --tree` and `store regions`; the cells
    /// each name takes are spelt out here, as a terminal draws them.
    @Test func columnsAfterWideNamesLineUpInCells() throws {
        let names: [(text: String, cells: Int)] = [
            ("東京都", 6), ("🇨🇭 Schweiz", 10), ("🚀 Rakete", 9), ("⚡ Blitz", 8), ("❤\u{FE0F} Herz", 7), ("서울", 4), ("🪐 Saturn", 9), ("Zürich", 6),
            ("ﾊﾝｶｸ", 4),
        ]
        let world = try ServedWorld()
        let path = world.published + "/catalog.json"
        var catalog = try JSONDecoder().decode(Catalog.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        for index in catalog.regions.indices {
            let name = names[index % names.count].text
            catalog.regions[index].names = catalog.regions[index].names.mapValues { _ in name }
        }
        try CanonicalJSON.encode(catalog).write(to: URL(fileURLWithPath: path))
        try? FileManager.default.removeItem(atPath: world.published + "/catalog.json.zst")
        let build = try world.build(try world.recipe(catalog: path), cache: "cache", out: "out")
        try #require(build.status == 0, "\(build.stderr)")
        let storage = world.folder.join("device/maps")
        let install = try Tool.mappack(
            [
                "store", "install", "--image", world.folder.join("out/net-2026.11.0.tar.zst"), "--storage", storage, "--cache",
                world.folder.join("device/cache"),
            ])
        try #require(install.status == 0, "\(install.stderr)")
        // Each name as a run of as many x as it takes cells: then characters are cells, and the
        // table's columns must line up as characters.
        func inCells(_ output: String) -> [Substring] {
            output.split(separator: "\n").map { line in
                var line = String(line)
                for (text, cells) in names where line.contains(text) {
                    line = line.replacingOccurrences(of: text, with: String(repeating: "x", count: cells))
                }
                return Substring(line)
            }
        }
        for (what, result) in [
            ("regions --tree", try Tool.mappack(["regions", path, "--tree"])),
            ("store regions", try Tool.mappack(["store", "regions", "--storage", storage, "--cache", world.folder.join("device/cache")])),
        ] {
            #expect(result.status == 0, "\(what): \(result.stderr)")
            #expect(names.allSatisfy { result.stdout.contains($0.text) }, "\(what): \(result.stdout)")
            #expect(PapercutTests.aligned(inCells(result.stdout)), "\(what) is not aligned in cells:\n\(result.stdout)")
        }
    }

    @Test func storeAvailableWithANewerCatalogSaysWhatItOffers() throws {
        let device = try InstalledWorld()
        // No catalog known yet: says how to give one, and is bad input (issue 32 item 6).
        let unknown = try device.store(["available"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("--catalog URL"), "\(unknown.stdout)\(unknown.stderr)")
        try SourceFixture.write(to: device.world.folder.join("source2"), mapVersion: "2.0", changed: ["ch.zh"])
        let publish = try Tool.mappack(["publish", device.world.folder.join("source2"), "--out", device.world.folder.join("catalog2")])
        #expect(publish.status == 0, "\(publish.stderr)")
        let newer = try device.store(["available", "--catalog", device.world.folder.join("catalog2/catalog.json")])
        #expect(newer.status == 0, "\(newer.stderr)")
        let said = newer.stdout + newer.stderr
        #expect(said.contains("2.0") && said.contains("mappack store update"), "\(said)")
        // What the newer catalog offers that the store does not hold is listed.
        #expect(newer.stdout.contains("europe/li"), "\(newer.stdout)")
        // Everything installed: says so rather than nothing.
        let own = try device.store(["available", "--catalog", device.world.catalog])
        #expect(own.status == 0)
        #expect(own.stdout.contains("europe/li"), "\(own.stdout)")
    }

    @Test func planNamesTheDownloadCacheItLooksIn() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let plan = try Tool.mappack(["plan", recipe, "--cache", world.cache])
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains(world.cache), "\(plan.stdout)")
    }
}
