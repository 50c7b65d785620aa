import Foundation
import TestSupport
import Testing

/// `--json` on every verb, each line tagged with and valid against its JSON Schema in `Schemas/`
/// (issue 19 item 8), checked with Debian's python3-jsonschema. The verbs come from
/// `mappack help --json`, made from the verbs' declarations, so a verb added without a case here
/// fails the test.
@Suite struct JSONSchemaTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// One run: what it is for (a verb, or `store VERB`), its arguments and the exit code it must end with.
    struct Run {
        let verb: String
        let arguments: [String]
        var status: Int32 = 0
    }

    @Test func everyVerbPrintsJSONThatItsSchemaDescribes() throws {
        let world = try PublishedWorld()
        let folder = world.folder
        try SourceFixture.write(to: folder.join("source2"), mapVersion: "2.0", changed: ["ch.zh"])
        let catalog2 = folder.join("catalog2/catalog.json")
        #expect(try Tool.mappack(["publish", folder.join("source2"), "--out", folder.join("catalog2")]).status == 0)
        try CatalogSourceFixture.writeJapan(to: folder.join("japan-source"), version: "2026.10.0", tokyoChanged: false)
        #expect(try Tool.mappack(["publish", folder.join("japan-source"), "--out", folder.join("japan")]).status == 0)
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        #expect(try world.build(recipe).status == 0)
        let image = world.out + "/fixture-1.0"
        let device = ["--storage", folder.join("device/maps"), "--cache", folder.join("device/cache")]
        #expect(try Tool.mappack(["store", "install", "--image", image + ".tar.zst"] + device).status == 0)
        let shards = folder.join("shards")
        // A tiny tileset and one region for `import`.
        let tileset = folder.join("import/tiles.mbtiles")
        try FileManager.default.createDirectory(atPath: folder.join("import"), withIntermediateDirectories: true)
        let made = try Tool.run(
            "/usr/bin/sqlite3",
            [
                tileset,
                "CREATE TABLE metadata (name TEXT, value TEXT); CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);"
                    + " INSERT INTO metadata VALUES ('format', 'pbf'); INSERT INTO tiles VALUES (0, 0, 0, x'1f8b00'), (1, 1, 1, x'1f8b01');",
            ])
        #expect(made.status == 0, "\(made.stderr)")
        try Data(
            #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"ch","name":"Switzerland"},"geometry":{"type":"Polygon","coordinates":[[[6,46],[10,46],[10,47.5],[6,46]]]}}]}"#
                .utf8
        ).write(to: URL(fileURLWithPath: folder.join("import/regions.geojson")))

        let runs: [Run] = [
            Run(verb: "build", arguments: ["build", recipe, "--cache", world.cache, "--out", folder.join("out2")]),
            Run(verb: "build", arguments: ["build", recipe, "--cache", world.cache, "--out", shards, "--shard", "1/2"]),
            Run(verb: "build", arguments: ["build", recipe, "--cache", world.cache, "--out", shards, "--shard", "2/2"]),
            Run(
                verb: "merge",
                arguments: ["merge", shards + "/fixture-1.0.shard-1-of-2", shards + "/fixture-1.0.shard-2-of-2", "--out", folder.join("merged")]),
            Run(verb: "plan", arguments: ["plan", recipe, "--cache", world.cache]),
            Run(verb: "plan", arguments: ["plan", folder.join("missing.yaml")], status: 2),
            Run(verb: "regions", arguments: ["regions", world.catalog]),
            Run(verb: "verify", arguments: ["verify", image]),
            Run(verb: "verify", arguments: ["verify", folder.join("device/maps")]),
            Run(verb: "inspect", arguments: ["inspect", image + ".tar.zst"]),
            // serve runs until a signal (ServeTests validates its `serving` line); here its refusal.
            Run(verb: "serve", arguments: ["serve", folder.join("no-image"), "--port", "0"], status: 2),
            Run(verb: "diff", arguments: ["diff", world.catalog, catalog2]),
            Run(verb: "diff", arguments: ["diff", image, folder.join("out2/fixture-1.0")]),
            Run(verb: "keygen", arguments: ["keygen", "--out", folder.join("release")]),
            Run(verb: "publish", arguments: ["publish", folder.join("source"), "--out", folder.join("catalog3")]),
            Run(
                verb: "import",
                arguments: ["import", "--tiles", tileset, "--regions", folder.join("import/regions.geojson"), "--out", folder.join("import/source")]),
            Run(verb: "completions", arguments: ["completions", "bash"]),
            Run(verb: "help", arguments: ["help"]),
            Run(verb: "help", arguments: ["help", "store"]),
            Run(verb: "--version", arguments: ["--version"]),
            Run(verb: "store status", arguments: ["store", "status"] + device),
            Run(
                verb: "store install",
                arguments: ["store", "install", "--image", image, "--storage", folder.join("d2/maps"), "--cache", folder.join("d2/cache")]),
            Run(verb: "store regions", arguments: ["store", "regions"] + device),
            Run(verb: "store delete", arguments: ["store", "delete", "europe/ch/zh"] + device),
            Run(verb: "store available", arguments: ["store", "available", "--catalog", world.catalog] + device),
            Run(verb: "store download", arguments: ["store", "download", "europe/ch/zh", "--catalog", world.catalog] + device),
            Run(verb: "store verify", arguments: ["store", "verify"] + device),
            Run(verb: "store cache", arguments: ["store", "cache", "size"] + device),
            Run(verb: "store cache", arguments: ["store", "cache", "limit", "1000"] + device),
            Run(verb: "store cache", arguments: ["store", "cache", "clear"] + device),
            Run(verb: "store catalogs", arguments: ["store", "catalogs", "add", folder.join("japan/catalog.json")] + device),
            Run(verb: "store catalogs", arguments: ["store", "catalogs"] + device),
            Run(verb: "store catalogs", arguments: ["store", "catalogs", "remove", "japan"] + device),
            Run(verb: "store repair", arguments: ["store", "repair", "--image", image] + device),
            Run(verb: "store available", arguments: ["store", "available", "--catalog", catalog2] + device),
            Run(verb: "store update", arguments: ["store", "update", "--check", "--catalog", catalog2] + device),
            Run(verb: "store update", arguments: ["store", "update", "--catalog", catalog2] + device),
            Run(verb: "store version", arguments: ["store", "version"] + device),
            Run(verb: "store move", arguments: ["store", "move", "--to", folder.join("device/moved")] + device),
        ]

        // Every verb the declarations list, and every store verb, has a run here and takes --json.
        let help = try Tool.mappack(["help", "--json"])
        let described = try #require(try JSONSerialization.jsonObject(with: Data(help.stdout.utf8)) as? [String: Any], "help --json: \(help.stdout)")
        let verbs = try #require(described["verbs"] as? [[String: Any]])
        #expect(verbs.count >= 12)
        var expected = ["--version"]
        for verb in verbs {
            let name = try #require(verb["name"] as? String)
            let options = (verb["options"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            #expect(options.contains("json"), "mappack \(name) takes no --json")
            if name == "store" {
                let storeVerbs = try #require(verb["verbs"] as? [String])
                expected += storeVerbs.map { "store " + $0 }
            } else {
                expected.append(name)
            }
        }
        for verb in expected { #expect(runs.contains { $0.verb == verb }, "no --json run of mappack \(verb) in this test") }

        var outputs: [String] = []
        for (index, run) in runs.enumerated() {
            let result = try Tool.mappack(run.arguments + ["--json"], environment: ["SOURCE_DATE_EPOCH": "1790000000"])
            #expect(result.status == run.status, "\(run.arguments.joined(separator: " ")): \(result.stderr)")
            #expect(!result.stdout.isEmpty, "\(run.arguments.joined(separator: " ")) --json printed nothing")
            let path = folder.join("json-\(index)-\(run.verb.replacingOccurrences(of: " ", with: "-")).jsonl")
            try Data(result.stdout.utf8).write(to: URL(fileURLWithPath: path))
            outputs.append(path)
        }
        let check = try Tool.run(
            "/usr/bin/python3", [JSONSchemaTests.root + "/Tests/Support/validate_json.py", JSONSchemaTests.root + "/Schemas"] + outputs)
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        // Every schema file describes some verb's output here: none is stale.
        #expect(check.stdout.split(separator: "\n").contains("schemas unused: "), "\(check.stdout)")
    }

    @Test func theBuildsEventLinesKeepTheirFieldsAndGainTheSchemaTag() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let build = try world.build(recipe, ["--json"])
        #expect(build.status == 0, "\(build.stderr)")
        let lines = try build.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(lines.allSatisfy { $0["schema"] as? String == "mappack-events/1" && $0["event"] is String })
        let done = try #require(lines.last)
        for field in [
            "image", "packed", "imageID", "mapVersion", "regions", "upToDate", "files", "bundles", "downloadedBytes", "sizeOnDiskInBytes", "seconds",
        ] {
            #expect(done[field] != nil, "done lost \(field)")
        }
    }
}
