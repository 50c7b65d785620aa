import Foundation
import TestSupport
import Testing

/// Issue 41 attack 6 and issue 45 item 1: `mappack import` streams its GeoJSON. It gives the errors
/// the whole-file parser (JSONSerialization) gave, keeps nothing it does not need (a huge string, a
/// deep or wide `properties` object, a nesting bomb), keeps a polygon's shape on disk (memory does not
/// grow with its vertices), and writes the same bytes: digests recorded from the whole-file parser's output pin the
/// streamed one's. Every run is the real binary under `prlimit` and `/usr/bin/time`, so a regression
/// fails its test (peak RSS measured) instead of filling the machine.
@Suite struct ImportGeoJSONStreamTests {
    static let square = #""geometry":{"type":"Polygon","coordinates":[[[-20,-60],[60,-60],[60,60],[-20,60],[-20,-60]]]}"#
    static let notJSON =
        "not JSON (The operation could not be completed. The data is not in the correct format.); expected a GeoJSON FeatureCollection"
    static let fixtures = Tool.repositoryRoot + "/Tests/Fixtures/geojson_inputs.py"

    /// A FeatureCollection of one region `w` named W around tile 5/16/11, with `properties` members added.
    static func oneRegion(properties extra: String = "", name: String = #""W""#) -> String {
        #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"w","name":\#(name)\#(extra)},\#(square)}]}"#
    }

    /// An import's result and its peak RSS in KiB.
    struct Measured {
        let result: Tool.Result
        let peakKiB: Int
    }

    /// Runs `mappack import` with `regions` (and `places`) as the GeoJSON, under 4 GiB of address
    /// space and 256 MiB files, measuring its peak RSS.
    static func importMeasured(
        _ folder: TemporaryFolder, regions: String, places: String? = nil, environment: [String: String] = [:], fileSize: Int = 256 << 20
    ) throws -> Measured {
        let tiles = folder.join("tiles.mbtiles")
        if !FileManager.default.fileExists(atPath: tiles) {
            try ImportHostileTests.mbtiles(tiles, ImportHostileTests.metadata + ImportHostileTests.table + ImportHostileTests.oneTile)
        }
        var arguments = ["import", "--tiles", tiles, "--regions", regions, "--out", folder.join("out"), "--catalog", "c", "--map-version", "1"]
        if let places { arguments += ["--places", places] }
        let peak = folder.join("peak-rss")
        let result = try Tool.run(
            "/usr/bin/prlimit",
            ["--as=4294967296", "--fsize=\(fileSize)", "--", "/usr/bin/time", "-f", "%M", "-o", peak, Tool.path("mappack")] + arguments,
            environment: environment, timeout: 300)
        let kib = Int((try? String(contentsOfFile: peak, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? -1
        return Measured(result: result, peakKiB: kib)
    }

    /// Writes `text` to `name` in `folder` and returns its path.
    static func write(_ text: String, _ name: String = "regions.geojson", in folder: TemporaryFolder) throws -> String {
        let path = folder.join(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func expectRefused(_ measured: Measured, file: String, saying message: String, _ what: String) {
        #expect(!measured.result.timedOut, "\(what): the import did not end")
        #expect(measured.result.status == 2, "\(what): \(measured.result.status) \(measured.result.stderr)")
        #expect(measured.result.stderr.contains(file + ": " + message), "\(what): \(measured.result.stderr)")
    }

    /// (what, the file's text): each is not JSON, anywhere in the file.
    static let notJSONCases: [(String, String)] = [
        ("truncated", String(oneRegion().dropLast(7))),
        ("empty", ""),
        ("a number ending in a point", oneRegion(properties: #","area":2."#)),
        ("a number with a leading zero", oneRegion(properties: #","area":02"#)),
        ("a number too large for a Double", oneRegion(properties: #","area":1e400"#)),
        ("a plus sign", oneRegion(properties: #","area":+2"#)),
        ("NaN", oneRegion(properties: #","area":NaN"#)),
        ("a lone high surrogate", oneRegion(name: #""\ud83d W""#)),
        ("a lone low surrogate", oneRegion(name: #""\ude00 W""#)),
        ("an invalid escape", oneRegion(name: #""\x""#)),
        ("a raw tab in a string", oneRegion(name: "\"a\tb\"")),
        ("more after the end", oneRegion() + " {}"),
        ("a string at the top", #""FeatureCollection""#),
        ("a comment", "/* c */" + oneRegion()),
        ("a bad feature before a syntax error", oneRegion(name: "5") + ","),
    ]

    @Test(arguments: 0..<notJSONCases.count)
    func whatIsNotJSONIsRefusedAsBefore(_ index: Int) throws {
        let (what, text) = Self.notJSONCases[index]
        let folder = TemporaryFolder("geojson-not-json")
        let file = try Self.write(text, in: folder)
        Self.expectRefused(try Self.importMeasured(folder, regions: file), file: file, saying: Self.notJSON, what)
    }

    @Test func bytesThatAreNotUTF8AreRefused() throws {
        let folder = TemporaryFolder("geojson-utf8")
        let file = folder.join("regions.geojson")
        var bytes = Data(Self.oneRegion(name: #""W@""#).utf8)
        bytes.replaceSubrange(bytes.firstRange(of: Data("@".utf8))!, with: [0xC0, 0x80])
        try bytes.write(to: URL(fileURLWithPath: file))
        Self.expectRefused(try Self.importMeasured(folder, regions: file), file: file, saying: Self.notJSON, "an overlong UTF-8 form")
    }

    /// 100,000 `[` (closed, and never closed) end in a refusal, not a crash of the stack; 512 levels,
    /// Foundation's limit, still read.
    @Test func aNestingBombIsRefusedAndFoundationsDepthStillReads() throws {
        let folder = TemporaryFolder("geojson-depth")
        let bomb = String(repeating: "[", count: 100_000)
        for (what, text) in [
            ("closed", Self.oneRegion(properties: ",\"x\":" + bomb + String(repeating: "]", count: 100_000))),
            ("never closed", bomb), ("513 levels", String(repeating: "[", count: 513) + String(repeating: "]", count: 513)),
        ] {
            let file = try Self.write(text, in: folder)
            let measured = try Self.importMeasured(folder, regions: file)
            Self.expectRefused(measured, file: file, saying: Self.notJSON, what)
            #expect(measured.peakKiB < 256 << 10, "\(what): \(measured.peakKiB) KiB")
        }
        // The collection, the features, a feature and its properties are 4 levels: 508 more make 512.
        let deepest = try Self.write(
            Self.oneRegion(properties: ",\"x\":" + String(repeating: "[", count: 508) + String(repeating: "]", count: 508)), in: folder)
        let read = try Self.importMeasured(folder, regions: deepest)
        #expect(read.result.status == 0, "\(read.result.stderr)")
    }

    /// A 64 MiB string and a 16 MiB tree of objects in properties import reads past: peak RSS stays
    /// that of a tiny file's import (the whole-file parser took 327 MB and 10 GB for 96 and 64 MiB).
    @Test func propertiesNobodyReadsAreCheckedButNotKept() throws {
        let folder = TemporaryFolder("geojson-skip")
        let small = try Self.importMeasured(folder, regions: try Self.write(Self.oneRegion(), "small.geojson", in: folder))
        #expect(small.result.status == 0, "\(small.result.stderr)")
        let item = #"{"a":[1,2.5,{"b":"cc","d":null}],"e":true,"f":{"g":{"h":[[],{}]}}}"#
        let tree = Array(repeating: item, count: (16 << 20) / (item.utf8.count + 1)).joined(separator: ",")
        for (what, extra, bytes) in [
            ("a huge string", ",\"description\":\"" + String(repeating: "x", count: 64 << 20) + "\"", 64 << 20),
            ("a wide, nested object", ",\"deep\":{\"list\":[" + tree + "]},\"more\":{\"names\":{\"de\":[1]}}", 16 << 20),
        ] {
            try FileManager.default.removeItem(atPath: folder.join("out"))
            let measured = try Self.importMeasured(folder, regions: try Self.write(Self.oneRegion(properties: extra), in: folder))
            #expect(measured.result.status == 0, "\(what): \(measured.result.stderr)")
            #expect(
                measured.peakKiB > 0 && measured.peakKiB - small.peakKiB < bytes / 2 / 1024,
                "\(what): \(measured.peakKiB) KiB, tiny file \(small.peakKiB) KiB")
        }
    }

    /// (what, the file's text, the refusal): the top level must be a FeatureCollection with a
    /// `features` array; its `type` may come after `features`.
    static let topLevels: [(String, String, String?)] = [
        ("an array", "[1, 2]", #"not a GeoJSON FeatureCollection (no "type": "FeatureCollection" at the top)"#),
        ("a Feature", #"{"type":"Feature","features":[]}"#, #"not a GeoJSON FeatureCollection (no "type": "FeatureCollection" at the top)"#),
        ("no features", #"{"type":"FeatureCollection"}"#, "features: missing or not an array"),
        ("features an object", #"{"type":"FeatureCollection","features":{}}"#, "features: missing or not an array"),
        ("an element not a Feature", #"{"type":"FeatureCollection","features":[{"type":"Feat"}]}"#, "features[0]: not a GeoJSON Feature object"),
        (
            "an element not a Feature after a bad feature",
            #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"name":"N"}},3]}"#,
            "features[1]: not a GeoJSON Feature object"
        ),
        ("type after features", #"{"features":[{"type":"Feature","properties":{"id":"w","name":"W"},\#(square)}],"type":"FeatureCollection"}"#, nil),
    ]

    @Test(arguments: 0..<topLevels.count)
    func theTopLevelIsAFeatureCollection(_ index: Int) throws {
        let (what, text, refusal) = Self.topLevels[index]
        let folder = TemporaryFolder("geojson-top")
        let file = try Self.write(text, in: folder)
        let measured = try Self.importMeasured(folder, regions: file)
        if let refusal {
            Self.expectRefused(measured, file: file, saying: refusal, what)
        } else {
            #expect(measured.result.status == 0, "\(what): \(measured.result.stderr)")
        }
    }

    /// A repeated key counts once, with its last value, as Foundation kept it.
    @Test func aRepeatedKeyCountsItsLastValue() throws {
        let folder = TemporaryFolder("geojson-repeated")
        let feature = #"{"type":"Feature","properties":{"id":"bad id!","id":"w","name":"W","name":"Last"},\#(Self.square)}"#
        let accepted = try Self.importMeasured(
            folder, regions: try Self.write(#"{"type":"FeatureCollection","features":[1],"features":[\#(feature)]}"#, in: folder))
        #expect(accepted.result.status == 0, "\(accepted.result.stderr)")
        let source = try String(contentsOfFile: folder.join("out/source.json"), encoding: .utf8)
        #expect(source.contains(#""en" : "Last""#), "\(source)")
        try FileManager.default.removeItem(atPath: folder.join("out"))
        let typeAfter = try Self.write(#"{"type":"FeatureCollection","features":[\#(feature)],"type":"Other"}"#, in: folder)
        Self.expectRefused(
            try Self.importMeasured(folder, regions: typeAfter), file: typeAfter,
            saying: #"not a GeoJSON FeatureCollection (no "type": "FeatureCollection" at the top)"#, "the last type")
        let featuresAfter = try Self.write(#"{"type":"FeatureCollection","features":[\#(feature)],"features":3}"#, in: folder)
        Self.expectRefused(
            try Self.importMeasured(folder, regions: featuresAfter), file: featuresAfter, saying: "features: missing or not an array",
            "the last features")
    }

    /// RFC 7946 3.2: a Feature's own `id` is a string or a number. A number becomes the id as written
    /// (an integer in its plain decimal form), a child's `parent` may name it as a number too, and an
    /// `"id": null` is no id (the one in `properties` counts, or the id is missing).
    @Test func aFeaturesNumericIdIsItsRegionId() throws {
        let folder = TemporaryFolder("geojson-numeric-id")
        let child =
            #"{"type":"Feature","id":7.5,"properties":{"name":"Child","parent":51477},"geometry":{"type":"Polygon","coordinates":[[[0,0],[10,0],[10,10],[0,10],[0,0]]]}}"#
        let regions = try Self.write(
            #"{"type":"FeatureCollection","features":[{"type":"Feature","id":51477,"properties":{"name":"W"},\#(Self.square)},\#(child)]}"#,
            in: folder)
        let measured = try Self.importMeasured(folder, regions: regions)
        #expect(measured.result.status == 0, "\(measured.result.stderr)")
        let source = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder.join("out/source.json")))) as? [String: Any])
        let found = (source["regions"] as? [[String: Any]] ?? []).map { ($0["id"] as? String ?? "?", $0["parent"] as? String ?? "-") }
        #expect(found.map(\.0).sorted() == ["51477", "7.5"], "\(found)")
        #expect(found.first { $0.0 == "7.5" }?.1 == "51477", "\(found)")

        let nullID = try Self.write(
            #"{"type":"FeatureCollection","features":[{"type":"Feature","id":null,"properties":{"name":"W"},\#(Self.square)}]}"#, "null.geojson",
            in: folder)
        Self.expectRefused(try Self.importMeasured(folder, regions: nullID), file: nullID, saying: "features[0].properties.id: missing", "a null id")
        let boolID = try Self.write(
            #"{"type":"FeatureCollection","features":[{"type":"Feature","id":true,"properties":{"name":"W"},\#(Self.square)}]}"#, "bool.geojson",
            in: folder)
        Self.expectRefused(
            try Self.importMeasured(folder, regions: boolID), file: boolID, saying: "features[0].id: expected a string or a number", "a true id")
    }

    /// A `parent` given as a number names the Feature `id` written the same way, by one rule: an
    /// integer in its plain decimal form, any other number as written. `"id": 1e3` was the region
    /// "1e3" while `"parent": 1e3` became "1000", so such a child was refused as naming no feature;
    /// and `"parent": true` was read as the number 1.
    @Test func aNumericParentNamesTheIdWrittenTheSameWay() throws {
        let folder = TemporaryFolder("geojson-numeric-parent")
        func feature(id: String, parent: String?) -> String {
            let parentMember = parent.map { #","parent":\#($0)"# } ?? ""
            return #"{"type":"Feature","id":\#(id),"properties":{"name":"R\#(id)"\#(parentMember)},\#(Self.square)}"#
        }
        let regions = try Self.write(
            #"{"type":"FeatureCollection","features":["#
                + [
                    feature(id: "1e3", parent: nil), feature(id: "2.50", parent: "1e3"), feature(id: "-0", parent: "2.50"),
                    feature(id: "7", parent: "-0"),
                ]
                .joined(separator: ",") + "]}",
            in: folder)
        let measured = try Self.importMeasured(folder, regions: regions)
        #expect(measured.result.status == 0, "\(measured.result.stderr)")
        let source = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder.join("out/source.json")))) as? [String: Any])
        let found = Dictionary(
            uniqueKeysWithValues: (source["regions"] as? [[String: Any]] ?? []).map { ($0["id"] as? String ?? "?", $0["parent"] as? String ?? "-") })
        #expect(found == ["1e3": "-", "2.50": "1e3", "0": "2.50", "7": "0"], "\(found)")

        let boolParent = try Self.write(
            #"{"type":"FeatureCollection","features":["# + feature(id: "1", parent: nil) + "," + feature(id: "2", parent: "true") + "]}",
            "bool.geojson", in: folder)
        Self.expectRefused(
            try Self.importMeasured(folder, regions: boolParent), file: boolParent,
            saying: "features[1].properties.parent: expected a string, a number or null", "a true parent")
    }

    /// Escapes, surrogate pairs among them, become the characters they name, in region and place names.
    @Test func unicodeEscapesAndSurrogatePairsInNamesAreRead() throws {
        let folder = TemporaryFolder("geojson-unicode")
        let regions = try Self.write(
            Self.oneRegion(
                properties: #","names":{"de":"Z\u00FCrich \ud83d\ude00","ja":"\u6771\u4eac"},"name:el":"\u0391\u03b8\u03ae\u03bd\u03b1 \/\\\"""#,
                name: #""\ud834\udd1e W""#), in: folder)
        let places = try Self.write(
            #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[10,10]},"properties":{"name":"Caf\u00e9 \ud83c\udf0d","alternate_names":["\ud83c\udf0e"]}}]}"#,
            "places.geojson", in: folder)
        let measured = try Self.importMeasured(folder, regions: regions, places: places)
        #expect(measured.result.status == 0, "\(measured.result.stderr)")
        let source = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder.join("out/source.json")))) as? [String: Any])
        let region = try #require((source["regions"] as? [[String: Any]])?.first)
        #expect(region["names"] as? [String: String] == ["en": "\u{1D11E} W", "de": "Zürich 😀", "ja": "東京", "el": "Αθήνα /\\\""], "\(region)")
        let rows = try Tool.run(
            "/usr/bin/sqlite3", [folder.join("out/bundles/w.search/regions/w/search.db"), "SELECT name, alternate_names FROM places ORDER BY rowid"],
            timeout: 60)
        #expect(rows.stdout.contains("Café 🌍|🌎\n"), "\(rows.stdout)\(rows.stderr)")
    }

    /// Issue 41 attack 6: a polygon of 400,000 vertices (8.6 MB) took 26 times its file in RSS above a
    /// tiny import's when parsed whole; streamed, it takes its compact shape: under 6 times.
    @Test func aManyVertexPolygonTakesMemoryInProportionToItsVertices() throws {
        let folder = TemporaryFolder("geojson-big-polygon")
        let small = try Self.importMeasured(folder, regions: try Self.write(Self.oneRegion(), "small.geojson", in: folder))
        var text = #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"big","name":"Big"},"#
        text += #""geometry":{"type":"Polygon","coordinates":[["#
        let count = 400_000
        text += (0..<count).map { index in
            let angle = 2 * Double.pi * Double(index) / Double(count)
            let radius = 5 + 0.5 * sin(40 * angle)
            return String(format: "[%.6f,%.6f]", 8 + radius * cos(angle), 47 + 0.7 * radius * sin(angle))
        }.joined(separator: ",")
        text += ",[13.000000,47.000000]]]}}]}"
        let file = try Self.write(text, in: folder)
        try FileManager.default.removeItem(atPath: folder.join("out"))
        let measured = try Self.importMeasured(folder, regions: file)
        #expect(measured.result.status == 0, "\(measured.result.stderr)")
        let grown = (measured.peakKiB - small.peakKiB) * 1024
        #expect(grown < 6 * text.utf8.count, "peak \(measured.peakKiB) KiB, tiny file \(small.peakKiB) KiB, file \(text.utf8.count) bytes")
    }

    /// Issue 41 attack 6, issue 45 item 1: memory does not grow with a polygon's vertices. A
    /// polygon of 4.5 M vertices (about 100 MB of GeoJSON) waits on disk while it is read, and its
    /// shape for the tile cover lives in a scratch file read through a bounded cache: peak RSS stays
    /// within 64 MiB of a five-vertex polygon's import (kept whole in memory, it took ~300 MiB more).
    @Test func aMillionsOfVerticesPolygonTakesBoundedMemory() throws {
        let folder = TemporaryFolder("geojson-huge-polygon")
        let small = try Self.importMeasured(folder, regions: try Self.write(Self.oneRegion(), "small.geojson", in: folder))
        #expect(small.result.status == 0, "\(small.result.stderr)")
        let file = folder.join("huge.geojson")
        let made = try Tool.run(
            "/usr/bin/python3",
            [
                "-c",
                """
                import math, sys
                n = 4500000
                with open(sys.argv[1], "w") as f:
                    f.write('{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"huge","name":"Huge"},')
                    f.write('"geometry":{"type":"Polygon","coordinates":[[')
                    for i in range(n):
                        a = 2 * math.pi * i / n
                        r = 5 + 0.5 * math.sin(40 * a)
                        f.write("%s[%.6f,%.6f]" % ("," if i else "", 8 + r * math.cos(a), 47 + 0.7 * r * math.sin(a)))
                    f.write(",[13.000000,47.000000]]]}}]}")
                """, file,
            ], timeout: 300)
        try #require(made.status == 0, "\(made.stderr)")
        try FileManager.default.removeItem(atPath: folder.join("out"))
        // Scratch files of a few hundred MiB are the point: a larger file-size cap than the others'.
        let measured = try Self.importMeasured(folder, regions: file, fileSize: 1 << 30)
        #expect(measured.result.status == 0, "\(measured.result.stderr)")
        let grown = measured.peakKiB - small.peakKiB
        #expect(measured.peakKiB > 0 && grown < 64 << 10, "peak \(measured.peakKiB) KiB, five-vertex polygon \(small.peakKiB) KiB")
        let listed = try Tool.run(
            "/usr/bin/sqlite3", [folder.join("out/bundles/huge.tiles/regions/huge/tiles.db"), "SELECT count(*) FROM tiles"], timeout: 60)
        #expect(listed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "\(listed.stdout)\(listed.stderr)")
    }

    /// 40,000 places (7.6 MB) over 16 regions: each goes to its region as it is read and waits on
    /// disk, so peak RSS grows by less than twice the file (the whole-file parser's grew by ~50 times it).
    @Test func placesWaitOnDiskNotInMemory() throws {
        let folder = TemporaryFolder("geojson-places")
        var regions: [String] = []
        for column in 0..<4 {
            for row in 0..<4 {
                let (west, south) = (2 + Double(column) * 3, 42.8 + Double(row) * 2.1)
                let ring = [(west, south), (west + 3, south), (west + 3, south + 2.1), (west, south + 2.1), (west, south)]
                    .map { "[\($0.0),\($0.1)]" }.joined(separator: ",")
                regions.append(
                    #"{"type":"Feature","properties":{"id":"r\#(column)\#(row)","name":"R"},"geometry":{"type":"Polygon","coordinates":[[\#(ring)]]}}"#
                )
            }
        }
        let boundaries = try Self.write(#"{"type":"FeatureCollection","features":[\#(regions.joined(separator: ","))]}"#, in: folder)
        let small = try Self.importMeasured(folder, regions: boundaries)
        #expect(small.result.status == 0, "\(small.result.stderr)")
        let places = (0..<40_000).map { index in
            let longitude = 2.1 + Double(index * 7919 % 11_800) / 1000
            let latitude = 42.9 + Double(index * 104_729 % 8_200) / 1000
            return #"{"type":"Feature","geometry":{"type":"Point","coordinates":[\#(longitude),\#(latitude)]},"#
                + #""properties":{"name":"Place \#(index)","population":\#(index * 31 % 5000),"alternate_names":["P\#(index)","Q\#(index)"]}}"#
        }
        let text = #"{"type":"FeatureCollection","features":[\#(places.joined(separator: ",\n"))]}"#
        let file = try Self.write(text, "places.geojson", in: folder)
        try FileManager.default.removeItem(atPath: folder.join("out"))
        let measured = try Self.importMeasured(folder, regions: boundaries, places: file)
        #expect(measured.result.status == 0, "\(measured.result.stderr)")
        let grown = (measured.peakKiB - small.peakKiB) * 1024
        #expect(grown < 2 * text.utf8.count, "peak \(measured.peakKiB) KiB, without places \(small.peakKiB) KiB, file \(text.utf8.count) bytes")
    }

    /// The streamed import writes what the whole-file parser wrote, on `geojson_inputs.py`'s inputs
    /// (every way of writing GeoJSON a stream could read differently) and on the real Alps of
    /// `ImportTests`: the digest of `source.json` and every database's rows (`geojson_inputs.py
    /// digest`), recorded from the build before the stream (b0a9ff5), with the same options and
    /// `SOURCE_DATE_EPOCH`, and with `--overview-maxzoom none` (overview bundles came later, issue 42).
    @Test(arguments: [
        ("fixture", "3ae7fd5915d1fbcb28169a8283b63813971d931f3560110b06d04f03fd892549"),
        ("alps", "340c2ba0825562fcf5e333b763ff5c6f9529af08ba16fd49e21a0d477256968f"),
    ])
    func theStreamedImportWritesTheWholeFileParsersBytes(inputs: String, digest: String) throws {
        let folder = TemporaryFolder("geojson-same-bytes")
        let source: String
        if inputs == "fixture" {
            let made = try Tool.run("/usr/bin/python3", [Self.fixtures, "inputs", "--out", folder.join("inputs")], timeout: 120)
            try #require(made.status == 0, "\(made.stderr)")
            source = folder.join("inputs")
        } else {
            let imported = ImportTests.Imported.shared
            try #require(imported.run.status == 0, "\(imported.run.stderr)")
            source = imported.inputs
        }
        let run = try Tool.mappack(
            [
                "import", "-q", "--tiles", source + "/tiles.mbtiles", "--regions", source + "/regions.geojson", "--places",
                source + "/places.geojson", "--out", folder.join("out"), "--catalog", "c", "--map-version", "1", "--overview-maxzoom", "none",
            ], environment: ["SOURCE_DATE_EPOCH": "1700000000"], timeout: 300)
        try #require(run.status == 0, "\(run.stderr)")
        let digested = try Tool.run("/usr/bin/python3", [Self.fixtures, "digest", folder.join("out")], timeout: 120)
        #expect(digested.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == digest, "\(digested.stdout)\(digested.stderr)")
    }
}
