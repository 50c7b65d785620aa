import Foundation
import TestSupport
import Testing

/// Issue 30, "Bring your own data": `mappack import` on real data (Switzerland, Liechtenstein and
/// Austria from Natural Earth, cut by tippecanoe, zooms 0-10; GeoNames places), its cover checked
/// by shapely (`Tools/realworld/make_import_inputs.py check`), then published and built; sharded
/// imports merged byte for byte; bad inputs refused with the feature and field named; and publish
/// refusing a source folder that breaks `mappack-source/1`.
@Suite struct ImportTests {
    /// The inputs and one unsharded import of them, made once per test process.
    final class Imported: @unchecked Sendable {
        static let shared = Imported()
        let folder = TemporaryFolder("import")
        var inputs: String { folder.join("inputs") }
        var source: String { folder.join("source") }
        var importArguments: [String] {
            ["import", "--tiles", inputs + "/tiles.mbtiles", "--regions", inputs + "/regions.geojson", "--places", inputs + "/places.geojson"]
        }
        let run: Tool.Result
        /// `make_import_inputs.py check`'s report on `source`.
        let report: [String: Any]
        let checkStatus: Int32

        private init() {
            do {
                let made = try Tool.run(
                    RealWorldFixture.python, [ImportTests.helper, "inputs", "--out", folder.join("inputs"), "--max-zoom", "10"], timeout: 300)
                precondition(made.status == 0, "make_import_inputs.py (run `make venv` first): \(made.stderr)")
                run = try Tool.mappack(
                    [
                        "import", "--tiles", folder.join("inputs/tiles.mbtiles"), "--regions", folder.join("inputs/regions.geojson"), "--places",
                        folder.join("inputs/places.geojson"), "--out", folder.join("source"), "--catalog", "alps", "--map-version", "2026.12.0",
                    ])
                let check = try Tool.run(
                    RealWorldFixture.python, [ImportTests.helper, "check", "--inputs", folder.join("inputs"), "--source", folder.join("source")])
                checkStatus = check.status
                report = (try? JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [String: Any]) ?? ["stderr": check.stderr]
            } catch {
                preconditionFailure("import fixture: \(error)")
            }
        }
    }

    static let helper = Tool.repositoryRoot + "/Tools/realworld/make_import_inputs.py"
    static let switzerland = "europe/ch"
    static let liechtenstein = "europe/li"

    @Test func everyTileThatMeetsARegionIsPlacedOnceWithItsBytes() throws {
        let imported = Imported.shared
        #expect(imported.run.status == 0, "\(imported.run.stderr)")
        let report = imported.report
        #expect(imported.checkStatus == 0, "\(report)")
        // The union of the covers is exactly the tiles shapely finds touching a polygon.
        #expect((report["missing"] as? [Any])?.isEmpty == true, "\(report)")
        #expect((report["extra"] as? [Any])?.isEmpty == true, "\(report)")
        #expect((report["storedTwice"] as? [Any])?.isEmpty == true, "\(report)")
        #expect(report["bytesDiffer"] as? Int == 0)
        let touching = try #require(report["touching"] as? Int)
        let input = try #require(report["inputTiles"] as? Int)
        #expect(report["placedTiles"] as? Int == touching)
        #expect(touching > 300 && touching <= input, "\(report)")
        // The summary accounts for every tile: placed, or meeting no region (issue 43: far ones went unreported).
        #expect(imported.run.stdout.contains("\(touching) of \(input) tiles placed, \(input - touching) meet no region"), "\(imported.run.stdout)")
    }

    /// An imported source says when its data was made (issue 43: images built from it said 1970): the
    /// newest input's time, or `SOURCE_DATE_EPOCH`; and a region's id may be the GeoJSON Feature's own
    /// `id` member (RFC 7946) instead of `properties.id`.
    @Test func importedSourceHasAReleaseTimeAndFeatureIDsAreRead() throws {
        let imported = Imported.shared
        let source = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: imported.source + "/source.json"))) as? [String: Any])
        let released = try #require(source["released"] as? String, "no release time in \(source.keys.sorted())")
        #expect(released.hasPrefix("20") && released.hasSuffix("Z"), "\(released)")

        let folder = TemporaryFolder("import-feature-id")
        let url = URL(fileURLWithPath: imported.inputs + "/regions.geojson")
        var geojson = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var features = try #require(geojson["features"] as? [[String: Any]])
        for index in features.indices {
            var properties = try #require(features[index]["properties"] as? [String: Any])
            features[index]["id"] = properties.removeValue(forKey: "id")
            features[index]["properties"] = properties
        }
        geojson["features"] = features
        try JSONSerialization.data(withJSONObject: geojson).write(to: URL(fileURLWithPath: folder.join("regions.geojson")))
        let run = try Tool.mappack(
            [
                "import", "--tiles", imported.inputs + "/tiles.mbtiles", "--regions", folder.join("regions.geojson"), "--out", folder.join("source"),
                "--catalog", "alps", "--map-version", "2026.12.0",
            ], environment: ["SOURCE_DATE_EPOCH": "1790000000"])
        #expect(run.status == 0, "\(run.stderr)")
        let text = try String(contentsOfFile: folder.join("source/source.json"), encoding: .utf8)
        #expect(text.contains("\"europe/ch\"") && text.contains("\"europe/li\""), "\(text.prefix(400))")
        let written = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(written["released"] as? String == "2026-09-21T14:13:20Z", "SOURCE_DATE_EPOCH is the release time: \(text.prefix(400))")
    }

    @Test func aTileInsideSwitzerlandIsOnlyInSwitzerlandsBundle() throws {
        let imported = Imported.shared
        let inside = try #require(imported.report["insideOnly"] as? [String: Any], "\(imported.report)")
        #expect(inside["bundle"] as? String == "europe.ch.tiles", "\(inside)")
        #expect(inside["listedBy"] as? [String] == [Self.switzerland], "\(inside)")
    }

    @Test func aBorderTileIsStoredOnceInASharedBundleBothCountriesList() throws {
        let imported = Imported.shared
        let border = try #require(imported.report["border"] as? [String: Any], "\(imported.report)")
        let bundles = try #require(border["bundles"] as? [String])
        #expect(bundles.count == 1 && bundles[0].hasPrefix("shared."), "\(border)")
        #expect(border["kinds"] as? [String] == ["border"], "\(border)")
        #expect(border["listedBy"] as? [String] == [Self.switzerland, Self.liechtenstein], "\(border)")
    }

    @Test func searchFindsZurichByAnAlternateName() throws {
        let imported = Imported.shared
        #expect(imported.run.status == 0, "\(imported.run.stderr)")
        let database = imported.source + "/bundles/europe.ch.search/regions/europe/ch/search.db"
        // Italian "Zurigo" is only among the alternate names.
        let found = try Tool.run("/usr/bin/sqlite3", ["-readonly", database, "SELECT name, kind FROM places WHERE places MATCH 'zurigo'"])
        #expect(found.stdout.split(separator: "\n").contains("Zürich|city"), "\(found.stdout)\(found.stderr)")
        // Austria's database does not hold Switzerland's places.
        let elsewhere = imported.source + "/bundles/europe.at.search/regions/europe/at/search.db"
        let none = try Tool.run("/usr/bin/sqlite3", ["-readonly", elsewhere, "SELECT count(*) FROM places WHERE places MATCH 'zurigo'"])
        #expect(none.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }

    @Test func theSourceFolderIsValidAgainstItsSchema() throws {
        let imported = Imported.shared
        #expect(imported.run.status == 0, "\(imported.run.stderr)")
        let check = try Tool.run(
            "/usr/bin/python3",
            [
                Tool.repositoryRoot + "/Tests/Support/validate_json.py", "--document", Tool.repositoryRoot + "/Schemas/mappack-source-1.schema.json",
                imported.source + "/source.json", RealWorldFixture.shared.source + "/source.json",
            ])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }

    @Test func publishAndBuildTakeTheImportedFolder() throws {
        let imported = Imported.shared
        #expect(imported.run.status == 0, "\(imported.run.stderr)")
        let folder = TemporaryFolder("import-build")
        let publish = try Tool.mappack(["publish", imported.source, "--out", folder.join("catalog")])
        #expect(publish.status == 0, "\(publish.stderr)")
        try Data(
            """
            name: alps
            catalog: \(folder.join("catalog/catalog.json"))
            regions:
              include: [\(Self.switzerland), \(Self.liechtenstein)]
            output:
              formats: [directory, mbtiles]
            """.utf8
        ).write(to: URL(fileURLWithPath: folder.join("alps.yaml")))
        let build = try Tool.mappack(["build", folder.join("alps.yaml"), "--out", folder.join("Output"), "--cache", folder.join("cache")])
        #expect(build.status == 0, "\(build.stderr)")
        let store = folder.join("Output/alps-2026.12.0/store")
        #expect(FileManager.default.fileExists(atPath: store + "/regions/europe/ch/tiles.db"))
        #expect(FileManager.default.fileExists(atPath: store + "/regions/europe/li/search.db"))
        #expect(!FileManager.default.fileExists(atPath: store + "/regions/europe/at/tiles.db"))
        // The shared border bundle came with both countries, and GDAL's reader sees Switzerland.
        let shared = try FileManager.default.contentsOfDirectory(atPath: store + "/shared")
        #expect(!shared.isEmpty)
        let check = try RealWorldFixture.check(
            [
                "mbtiles", folder.join("Output/alps-2026.12.0.mbtiles"), "--expect-layer", "countries", "--expect-name", "Switzerland", "--min-zoom",
                "0",
            ])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }

    @Test func shardedImportsMergeIntoTheSameBytes() throws {
        let imported = Imported.shared
        #expect(imported.run.status == 0, "\(imported.run.stderr)")
        let folder = TemporaryFolder("import-shards")
        let options = ["--catalog", "alps", "--map-version", "2026.12.0"]
        for index in 1...3 {
            let shard = try Tool.mappack(imported.importArguments + options + ["--shard", "\(index)/3", "--out", folder.join("shard-\(index)")])
            #expect(shard.status == 0, "\(shard.stderr)")
        }
        // Europe's overview is written by exactly one shard (issue 42 item 4).
        let holders = (1...3).filter {
            FileManager.default.fileExists(atPath: folder.join("shard-\($0)/bundles/europe.overview/overview/europe/tiles.db"))
        }
        #expect(holders.count == 1, "\(holders)")
        // A shard missing is refused, naming it.
        let partial = try Tool.mappack(["import", "--merge", folder.join("shard-1"), folder.join("shard-3"), "--out", folder.join("partial")])
        #expect(partial.status == 2 && partial.stderr.contains("missing 2"), "\(partial.stderr)")
        let merge = try Tool.mappack(
            ["import", "--merge", folder.join("shard-3"), folder.join("shard-1"), folder.join("shard-2"), "--out", folder.join("merged")])
        #expect(merge.status == 0, "\(merge.stderr)")
        let expected = try Self.files(imported.source)
        let merged = try Self.files(folder.join("merged"))
        #expect(expected.keys.sorted() == merged.keys.sorted())
        #expect(expected.count >= 10)
        for (path, bytes) in expected { #expect(merged[path] == bytes, "\(path) differs") }
    }

    @Test(arguments: [
        (
            #"{"type":"Feature","properties":{"name":"Nowhere"},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}}"#,
            "features[1].properties.id: missing"
        ),
        (
            #"{"type":"Feature","properties":{"id":"p","name":"Point"},"geometry":{"type":"Point","coordinates":[0,0]}}"#,
            "features[1].geometry.type: expected Polygon or MultiPolygon, got Point"
        ),
        (
            #"{"type":"Feature","properties":{"id":"q","parent":"atlantis","name":"Q"},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}}"#,
            "features[1].properties.parent: 'atlantis' is not the id of any feature"
        ),
        (
            #"{"type":"Feature","properties":{"id":"r","name":"R"},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,91],[0,0]]]}}"#,
            "features[1].geometry.coordinates[0][2]: latitude 91.0 is outside -90...90"
        ),
    ])
    func badBoundariesFailNamingTheFeatureAndField(feature: String, message: String) throws {
        let imported = Imported.shared
        let folder = TemporaryFolder("import-bad")
        let good = #"{"type":"Feature","properties":{"id":"ok","name":"OK"},"geometry":{"type":"Polygon","coordinates":[[[0,0],[2,0],[2,2],[0,0]]]}}"#
        let file = folder.join("regions.geojson")
        try Data(#"{"type":"FeatureCollection","features":[\#(good),\#(feature)]}"#.utf8).write(to: URL(fileURLWithPath: file))
        let result = try Tool.mappack(["import", "--tiles", imported.inputs + "/tiles.mbtiles", "--regions", file, "--out", folder.join("out")])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(file + ": " + message), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.join("out")))
    }

    @Test(arguments: [
        ("bbox", #"[5.9, 45.8, 10.5]"#, "regions[2].bbox: expected 4 numbers [west, south, east, north], got 3"),
        ("bbox", #"[5.9, 47.8, 10.5, 45.8]"#, "regions[2].bbox: south 47.8 is above north 45.8"),
        ("bbox", #"[5.9, 45.8, 190, 47.8]"#, "regions[2].bbox: east 190.0 is outside -180...180"),
        ("center", #"[8.2, 196.8]"#, "regions[2].center: longitude 196.8 is outside -180...180"),
        ("center", #"[98.2, 46.8]"#, "regions[2].center: latitude 98.2 is outside -90...90"),
        ("bundles", #"["ch", "nowhere"]"#, "regions[2].bundles[1]: 'nowhere' is not a key of \"bundles\""),
    ])
    func publishRefusesASourceThatBreaksTheFormat(field: String, value: String, message: String) throws {
        let folder = TemporaryFolder("source-bad")
        let source = try SourceFixture.write(to: folder.join("source"))
        let file = source + "/source.json"
        var document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
        var regions = try #require(document["regions"] as? [[String: Any]])
        #expect(regions[2]["id"] as? String == "europe/ch")
        regions[2][field] = try JSONSerialization.jsonObject(with: Data(value.utf8))
        document["regions"] = regions
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: file))
        let result = try Tool.mappack(["publish", source, "--out", folder.join("catalog")])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(file + ": " + message), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.join("catalog")))
    }

    @Test func publishRefusesADeclaredBundleWithoutItsFolder() throws {
        let folder = TemporaryFolder("source-missing")
        let source = try SourceFixture.write(to: folder.join("source"))
        try FileManager.default.removeItem(atPath: source + "/bundles/li")
        let result = try Tool.mappack(["publish", source, "--out", folder.join("catalog")])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(source + "/source.json: bundles.li: no folder \(source)/bundles/li/"), "\(result.stderr)")
    }

    /// Every regular file under `root`, by relative path.
    static func files(_ root: String) throws -> [String: Data] {
        var found: [String: Data] = [:]
        let enumerator = try #require(FileManager.default.enumerator(atPath: root))
        while let relative = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            guard unsafe FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue else {
                continue
            }
            found[relative] = try Data(contentsOf: URL(fileURLWithPath: root + "/" + relative))
        }
        return found
    }
}
