import Foundation
import TestSupport
import Testing

/// Issue 42 item 4, "An overview for imported worlds": `mappack import` writes, for each region with
/// children and each root, an overview bundle (kind `overview`, `overview/<id>/tiles.db`) of the
/// tiles of zooms 0…`--overview-maxzoom` that meet the region's polygon, checked by shapely
/// (`make_import_inputs.py check`) and `sqlite3`; the low zooms stay in the leaves' bundles too; a
/// build's cache seed of the parent takes the overview first; `none` writes none.
@Suite struct ImportOverviewTests {
    static let continent = "europe"
    static let bundle = "europe.overview"
    static let file = "overview/europe/tiles.db"

    /// `source.json` of the source folder at `folder`.
    /// `mappack import` of the shared inputs (`ImportTests.Imported`) into `out` with `--overview-maxzoom value`.
    static func importShared(into out: String, overviewMaxZoom value: String) throws -> Tool.Result {
        let inputs = ImportTests.Imported.shared.inputs
        return try Tool.mappack(
            [
                "import", "--tiles", inputs + "/tiles.mbtiles", "--regions", inputs + "/regions.geojson", "--out", out,
                "--overview-maxzoom", value,
            ], timeout: 300)
    }

    static func sourceDocument(_ folder: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/source.json"))) as? [String: Any])
    }

    /// The names of the bundles of kind `overview` in `document`, sorted.
    static func overviewBundles(_ document: [String: Any]) throws -> [String] {
        let bundles = try #require(document["bundles"] as? [String: [String: Any]])
        return bundles.filter { $0.value["kind"] as? String == "overview" }.map(\.key).sorted()
    }

    /// `sqlite3 -readonly database query`'s output, trimmed.
    static func sqlite(_ database: String, _ query: String) throws -> String {
        let result = try Tool.run("/usr/bin/sqlite3", ["-readonly", database, query], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func theParentGetsAnOverviewOfTheLowZoomsThatMeetItsPolygon() throws {
        let imported = ImportTests.Imported.shared
        #expect(imported.run.status == 0, "\(imported.run.stderr)")
        let document = try Self.sourceDocument(imported.source)
        // One overview, for the one region with children, listed by it alone.
        #expect(try Self.overviewBundles(document) == [Self.bundle])
        let regions = try #require(document["regions"] as? [[String: Any]])
        let listing = regions.filter { ($0["bundles"] as? [String])?.contains(Self.bundle) == true }.compactMap { $0["id"] as? String }
        #expect(listing == [Self.continent])
        // sqlite3 sees zooms 0-5 (the default) and says so in the metadata.
        let database = imported.source + "/bundles/" + Self.bundle + "/" + Self.file
        #expect(try Self.sqlite(database, "SELECT min(zoom_level), max(zoom_level) FROM tiles") == "0|5")
        #expect(try Self.sqlite(database, "SELECT value FROM metadata WHERE name IN ('minzoom', 'maxzoom') ORDER BY name DESC") == "0\n5")
        // Shapely: exactly the input tiles of zooms 0-5 that touch Europe's polygon, with their bytes.
        #expect(imported.checkStatus == 0, "\(imported.report)")
        let overviews = try #require(imported.report["overviews"] as? [String: [String: Any]], "\(imported.report)")
        let overview = try #require(overviews[Self.bundle], "\(overviews)")
        #expect(overview["files"] as? [String] == [Self.file], "\(overview)")
        #expect((overview["missing"] as? [Any])?.isEmpty == true, "\(overview)")
        #expect((overview["extra"] as? [Any])?.isEmpty == true, "\(overview)")
        #expect(overview["bytesDiffer"] as? Int == 0, "\(overview)")
        #expect(overview["zooms"] as? [Int] == Array(0...5), "\(overview)")
        // The low zooms stay in the countries' bundles too (a device with a country and no overview
        // shows them): the cover of the other bundles, overviews left out, misses no tile.
        #expect((imported.report["missing"] as? [Any])?.isEmpty == true, "\(imported.report)")
    }

    @Test(arguments: [("2", [0, 1, 2]), ("0", [0]), ("none", [])])
    func overviewMaxZoomChoosesTheZooms(_ value: String, _ zooms: [Int]) throws {
        let imported = ImportTests.Imported.shared
        let folder = TemporaryFolder("import-overview-zoom")
        let run = try Self.importShared(into: folder.join("source"), overviewMaxZoom: value)
        #expect(run.status == 0, "\(run.stderr)")
        let overviews = try Self.overviewBundles(try Self.sourceDocument(folder.join("source")))
        if zooms.isEmpty {
            #expect(overviews.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: folder.join("source/bundles/" + Self.bundle)))
        } else {
            #expect(overviews == [Self.bundle])
            let database = folder.join("source/bundles/" + Self.bundle + "/" + Self.file)
            let found = try Self.sqlite(database, "SELECT DISTINCT zoom_level FROM tiles ORDER BY 1").split(separator: "\n").compactMap { Int($0) }
            #expect(found == zooms)
            let check = try Tool.run(
                RealWorldFixture.python,
                [ImportTests.helper, "check", "--inputs", imported.inputs, "--source", folder.join("source"), "--overview-maxzoom", value],
                timeout: 300)
            #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        }
    }

    /// A root without children gets an overview too: a seed short of space skips its whole
    /// `tiles.db` but takes its low zooms.
    @Test func aChildlessRootGetsAnOverviewToo() throws {
        let imported = ImportTests.Imported.shared
        let folder = TemporaryFolder("import-overview-roots")
        let inputs = folder.join("inputs")
        try FileManager.default.createDirectory(atPath: inputs, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: inputs + "/tiles.mbtiles", withDestinationPath: imported.inputs + "/tiles.mbtiles")
        let url = URL(fileURLWithPath: imported.inputs + "/regions.geojson")
        var geojson = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var features = try #require(geojson["features"] as? [[String: Any]])
        features = features.filter { ($0["properties"] as? [String: Any])?["parent"] != nil }
        for index in features.indices {
            var properties = try #require(features[index]["properties"] as? [String: Any])
            properties.removeValue(forKey: "parent")
            features[index]["properties"] = properties
        }
        geojson["features"] = features
        try JSONSerialization.data(withJSONObject: geojson).write(to: URL(fileURLWithPath: inputs + "/regions.geojson"))
        let run = try Tool.mappack(
            ["import", "--tiles", inputs + "/tiles.mbtiles", "--regions", inputs + "/regions.geojson", "--out", folder.join("source")],
            timeout: 300)
        #expect(run.status == 0, "\(run.stderr)")
        let overviews = try Self.overviewBundles(try Self.sourceDocument(folder.join("source")))
        #expect(overviews == ["europe.at.overview", "europe.ch.overview", "europe.li.overview"], "\(overviews)")
        let check = try Tool.run(
            RealWorldFixture.python, [ImportTests.helper, "check", "--inputs", inputs, "--source", folder.join("source")], timeout: 300)
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.contains("\"europe.li.overview\""), "\(check.stdout)")
    }

    /// A tile of a low zoom is in the overview of every parent it meets, and in the deepest region's
    /// bundle; shards write each overview once and merge into the unsharded bytes.
    @Test func nestedParentsEachHoldTheLowZoomsThatMeetThem() throws {
        let folder = TemporaryFolder("import-overview-nested")
        let tiles = folder.join("tiles.mbtiles")
        // Zoom 0; zoom 1 north-east; zoom 2 at 0-90°E, 0-66°N (meets all three) and one at the south-west
        // corner (meets none).
        let made = try Tool.run(
            "/usr/bin/sqlite3",
            [
                tiles,
                "CREATE TABLE metadata (name TEXT, value TEXT); CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);"
                    + " INSERT INTO metadata VALUES ('format', 'pbf');"
                    + " INSERT INTO tiles VALUES (0, 0, 0, x'1f8b00'), (1, 1, 1, x'1f8b01'), (2, 2, 2, x'1f8b02'), (2, 0, 0, x'1f8b03');",
            ], timeout: 60)
        #expect(made.status == 0, "\(made.stderr)")
        func square(_ id: String, _ parent: String?, _ size: Int) -> String {
            let parentMember = parent.map { #","parent":"\#($0)""# } ?? ""
            return #"{"type":"Feature","properties":{"id":"\#(id)","name":"\#(id)"\#(parentMember)},"#
                + #""geometry":{"type":"Polygon","coordinates":[[[1,1],[\#(size),1],[\#(size),\#(size)],[1,\#(size)],[1,1]]]}}"#
        }
        let regions = folder.join("regions.geojson")
        try Data(
            #"{"type":"FeatureCollection","features":[\#(square("r", nil, 40)),\#(square("r/a", "r", 20)),\#(square("r/a/b", "r/a", 10))]}"#
                .utf8
        ).write(to: URL(fileURLWithPath: regions))
        let arguments = ["import", "--tiles", tiles, "--regions", regions, "--overview-maxzoom", "1"]
        let whole = try Tool.mappack(arguments + ["--out", folder.join("source")], timeout: 120)
        #expect(whole.status == 0, "\(whole.stderr)")
        let source = folder.join("source/bundles")
        let query = "SELECT group_concat(zoom_level || '/' || tile_column || '/' || tile_row, ' ') FROM (SELECT * FROM tiles ORDER BY 1, 2, 3)"
        #expect(try Self.sqlite(source + "/r.overview/overview/r/tiles.db", query) == "0/0/0 1/1/1")
        #expect(try Self.sqlite(source + "/r.a.overview/overview/r/a/tiles.db", query) == "0/0/0 1/1/1")
        #expect(try Self.sqlite(source + "/r.a.b.tiles/regions/r/a/b/tiles.db", query) == "0/0/0 1/1/1 2/2/2")
        #expect(try Self.overviewBundles(try Self.sourceDocument(folder.join("source"))) == ["r.a.overview", "r.overview"])

        for index in 1...2 {
            let shard = try Tool.mappack(arguments + ["--shard", "\(index)/2", "--out", folder.join("shard-\(index)")], timeout: 120)
            #expect(shard.status == 0, "\(shard.stderr)")
        }
        for overview in ["r.overview", "r.a.overview"] {
            let holders = (1...2).filter { FileManager.default.fileExists(atPath: folder.join("shard-\($0)/bundles/" + overview)) }
            #expect(holders.count == 1, "\(overview): \(holders)")
        }
        let merge = try Tool.mappack(["import", "--merge", folder.join("shard-1"), folder.join("shard-2"), "--out", folder.join("merged")])
        #expect(merge.status == 0, "\(merge.stderr)")
        let expected = try ImportTests.files(folder.join("source"))
        let merged = try ImportTests.files(folder.join("merged"))
        #expect(expected.keys.sorted() == merged.keys.sorted())
        for (path, bytes) in expected { #expect(merged[path] == bytes, "\(path) differs") }
    }

    @Test(arguments: ["11", "-1", "x", "2.5", ""])
    func aBadOverviewMaxZoomIsRefusedNamingTheOption(_ value: String) throws {
        let folder = TemporaryFolder("import-overview-bad")
        let run = try Self.importShared(into: folder.join("source"), overviewMaxZoom: value)
        #expect(run.status == 2, "\(run.status) \(run.stderr)")
        // Named as a value it refuses, not as an option it does not know.
        let expected =
            value == "11"
            ? "--overview-maxzoom 11: the tileset's zooms end at 10; give 0 to 10, or none"
            : "--overview-maxzoom must be a zoom from 0 to the tileset's highest (30 at most), or none, not '\(value)'"
        #expect(run.stderr.contains(expected), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.join("source")))
    }

    /// Issue 42: `cacheSeed: {include: [japan], maxBytes: 1 MiB}` took whole prefectures' files and
    /// no low zooms. The parent's overview now comes first, before any country's file.
    @Test func aSmallCacheSeedOfTheParentTakesItsOverviewFirst() throws {
        let imported = ImportTests.Imported.shared
        #expect(imported.run.status == 0, "\(imported.run.stderr)")
        let overview = imported.source + "/bundles/" + Self.bundle + "/" + Self.file
        let size = try #require(try FileManager.default.attributesOfItem(atPath: overview)[.size] as? Int, "no \(overview)")
        let folder = TemporaryFolder("import-overview-seed")
        let publish = try Tool.mappack(["publish", imported.source, "--out", folder.join("catalog")])
        #expect(publish.status == 0, "\(publish.stderr)")
        try Data(
            """
            name: alps
            catalog: \(folder.join("catalog/catalog.json"))
            regions:
              include: [\(ImportTests.liechtenstein)]
            cacheSeed:
              include: [\(Self.continent)]
              maxBytes: \(3 * size)
            output:
              formats: [directory]
            """.utf8
        ).write(to: URL(fileURLWithPath: folder.join("alps.yaml")))
        let build = try Tool.mappack(["build", folder.join("alps.yaml"), "--out", folder.join("Output"), "--cache", folder.join("cache")])
        #expect(build.status == 0, "\(build.stderr)")
        let seed = folder.join("Output/alps-2026.12.0")
        let keys = try Self.sqlite(seed + "/cache-seed.sqlite", "SELECT key FROM entries ORDER BY accessed").split(separator: "\n").map(String.init)
        #expect(keys.first == Self.file, "\(keys)")
        let total = try Self.sqlite(seed + "/cache-seed.sqlite", "SELECT coalesce(sum(size), 0) FROM entries")
        #expect((Int(total) ?? .max) <= 3 * size, "\(total)")
        // Liechtenstein, installed, shows its low zooms from its own bundles without the overview.
        #expect(!FileManager.default.fileExists(atPath: seed + "/store/overview"))
        let store = seed + "/store"
        let databases = try FileManager.default.subpathsOfDirectory(atPath: store).filter { $0.hasSuffix("tiles.db") }
        var zooms = Set<Int>()
        for database in databases {
            for line in try Self.sqlite(store + "/" + database, "SELECT DISTINCT zoom_level FROM tiles").split(separator: "\n") {
                zooms.formUnion(Int(line).map { [$0] } ?? [])
            }
        }
        #expect(Set(0...5).isSubset(of: zooms), "\(databases): zooms \(zooms.sorted())")
    }
}
