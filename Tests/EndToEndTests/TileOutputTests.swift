import Foundation
import TestSupport
import Testing

/// `output.formats: [mbtiles, maplibre-offline]`: the image's tiles in the two databases map SDKs
/// read, checked with the stock `sqlite3` against the MBTiles 1.3 spec and MapLibre Native's
/// offline schema 6, tile by tile against the tile databases in the image.
@Suite struct TileOutputTests {
    /// A demo world of Switzerland and Austria, published, and one build writing every format.
    struct Built {
        let folder = TemporaryFolder("tiles")
        var out: String { folder.join("Output") }
        var image: String { out + "/alps-2026.11.0" }

        init() throws {
            let catalog = try DemoWorldFixture.publish(in: folder, only: "europe/ch,europe/at", scale: 0.3)
            try """
            name: alps
            catalog: \(catalog)
            regions:
              include: [europe/ch, europe/at]
            output:
              formats: [directory, mbtiles, maplibre-offline]
            """.write(toFile: folder.join("alps.yaml"), atomically: true, encoding: .utf8)
        }

        func build(_ extra: [String] = []) throws -> Tool.Result {
            try Tool.mappack(["build", folder.join("alps.yaml"), "--out", out, "--cache", folder.join("cache")] + extra)
        }
    }

    static func sqlite(_ database: String, _ sql: String) throws -> [String] {
        let result = try Tool.run("/usr/bin/sqlite3", ["-readonly", database, sql])
        #expect(result.status == 0, "\(sql): \(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    /// Every tile of the image's own tile databases, as "z/x/y(XYZ) hex-of-first-10-bytes".
    static func imageTiles(_ image: String) throws -> Set<String> {
        let store = image + "/store"
        var all = Set<String>()
        let walker = FileManager.default.enumerator(atPath: store)!
        while let path = walker.nextObject() as? String {
            guard path.hasSuffix("tiles.db") || path.hasSuffix("overview.db") else { continue }
            all.formUnion(
                try sqlite(
                    store + "/" + path,
                    "SELECT zoom_level || '/' || tile_column || '/' || ((1 << zoom_level) - 1 - tile_row) || ' ' || hex(substr(tile_data, 1, 10)) FROM tiles"
                ))
        }
        return all
    }

    /// The tile's first bytes name its own address: 0x1A, zoom, x and y (XYZ) little-endian.
    static func header(_ z: Int, _ x: Int, _ y: Int) -> String {
        func le(_ value: Int) -> String { (0..<4).map { String(format: "%02X", (value >> (8 * $0)) & 0xFF) }.joined() }
        return String(format: "1A%02X", z) + le(x) + le(y)
    }

    @Test func mbtilesHoldsEveryTileOfTheImageWithTheSpecsMetadata() throws {
        let built = try Built()
        let build = try built.build()
        #expect(build.status == 0, "\(build.stderr)")
        let mbtiles = built.out + "/alps-2026.11.0.mbtiles"
        #expect(try Self.sqlite(mbtiles, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") == ["metadata", "tiles"])
        #expect(try Self.sqlite(mbtiles, "SELECT name FROM pragma_table_info('tiles')") == ["zoom_level", "tile_column", "tile_row", "tile_data"])
        let metadata = Dictionary(
            uniqueKeysWithValues: try Self.sqlite(mbtiles, "SELECT name || '=' || value FROM metadata").map {
                let parts = $0.split(separator: "=", maxSplits: 1)
                return (String(parts[0]), String(parts[1]))
            })
        #expect(metadata["name"] == "alps-2026.11.0")
        #expect(metadata["format"] == "application/vnd.mappack.demo-tile")
        #expect(metadata["version"] == "2026.11.0")
        let bounds = try #require(metadata["bounds"]).split(separator: ",").compactMap { Double($0) }
        #expect(bounds.count == 4 && bounds[0] < bounds[2] && bounds[1] < bounds[3])
        let zooms = try Self.sqlite(mbtiles, "SELECT min(zoom_level) || ' ' || max(zoom_level) FROM tiles")
        #expect(zooms == ["\(metadata["minzoom"]!) \(metadata["maxzoom"]!)"])

        // The same tiles as the image's tile databases, TMS rows turned back to XYZ, and each
        // tile's bytes name the address it is stored under.
        let tiles = try Self.sqlite(
            mbtiles,
            "SELECT zoom_level || '/' || tile_column || '/' || ((1 << zoom_level) - 1 - tile_row) || ' ' || hex(substr(tile_data, 1, 10)) FROM tiles")
        #expect(Set(tiles) == (try Self.imageTiles(built.image)))
        #expect(tiles.count > 20)
        for line in tiles.prefix(50) {
            let parts = line.split(separator: " ")
            let address = parts[0].split(separator: "/").compactMap { Int($0) }
            #expect(String(parts[1]) == Self.header(address[0], address[1], address[2]), "\(line)")
        }
    }

    @Test func mapLibreDatabaseHasSchemaSixAndOneRegionPerRecipeRegion() throws {
        let built = try Built()
        let build = try built.build()
        #expect(build.status == 0, "\(build.stderr)")
        let database = built.out + "/alps-2026.11.0.maplibre.db"
        #expect(try Self.sqlite(database, "PRAGMA user_version") == ["6"])
        #expect(
            try Self.sqlite(database, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
                == ["region_resources", "region_tiles", "regions", "resources", "tiles"])
        #expect(
            try Self.sqlite(database, "SELECT name FROM pragma_table_info('tiles')")
                == [
                    "id", "url_template", "pixel_ratio", "z", "x", "y", "expires", "modified", "etag", "data", "compressed", "accessed",
                    "must_revalidate",
                ])
        #expect(
            try Self.sqlite(database, "SELECT name FROM pragma_table_info('resources')")
                == ["id", "url", "kind", "expires", "modified", "etag", "data", "compressed", "accessed", "must_revalidate"])
        #expect(try Self.sqlite(database, "SELECT name FROM pragma_table_info('regions')") == ["id", "definition", "description"])
        #expect(
            try Self.sqlite(database, "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%' ORDER BY name")
                == ["region_resources_resource_id", "region_tiles_tile_id", "resources_accessed", "tiles_accessed"])

        // One region per recipe include, each a tile pyramid definition MapLibre decodes.
        let definitions = try Self.sqlite(database, "SELECT definition FROM regions ORDER BY id")
        #expect(definitions.count == 2)
        for text in definitions {
            let definition = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            let bounds = try #require(definition["bounds"] as? [Double])
            #expect(bounds.count == 4 && bounds[0] < bounds[2] && bounds[1] < bounds[3], "south, west, north, east: \(bounds)")
            #expect((definition["min_zoom"] as? Double ?? 99) <= (definition["max_zoom"] as? Double ?? -1))
            #expect(definition["style_url"] is String && definition["pixel_ratio"] as? Double == 1)
        }
        let descriptions = try Self.sqlite(database, "SELECT CAST(description AS TEXT) FROM regions ORDER BY id")
        #expect(descriptions.contains { $0.contains("europe/at") } && descriptions.contains { $0.contains("europe/ch") })
        // Every tile belongs to a region; XYZ addresses with the image's bytes.
        #expect(try Self.sqlite(database, "SELECT count(*) FROM tiles WHERE id NOT IN (SELECT tile_id FROM region_tiles)") == ["0"])
        let tiles = try Self.sqlite(database, "SELECT z || '/' || x || '/' || y || ' ' || hex(substr(data, 1, 10)) FROM tiles")
        #expect(Set(tiles) == (try Self.imageTiles(built.image)))
        #expect(try Self.sqlite(database, "SELECT DISTINCT url_template FROM tiles") == ["mappack://demo-world/{z}/{x}/{y}"])
    }

    /// Same recipe, same bytes; an unchanged rebuild is a no-op that still finds both files.
    @Test func tileOutputsAreReproducibleAndStamped() throws {
        let built = try Built()
        #expect(try built.build().status == 0)
        let names = ["alps-2026.11.0.mbtiles", "alps-2026.11.0.maplibre.db"]
        let first = try names.map { try Data(contentsOf: URL(fileURLWithPath: built.out + "/" + $0)) }
        let again = try built.build()
        #expect(again.stdout.contains("up to date") || again.stderr.contains("up to date"), "\(again.stdout) \(again.stderr)")
        try FileManager.default.removeItem(atPath: built.out + "/" + names[0])
        #expect(try built.build().status == 0)
        #expect(try built.build(["--force"]).status == 0)
        #expect(try names.map { try Data(contentsOf: URL(fileURLWithPath: built.out + "/" + $0)) } == first)
    }

    /// Issue 32 item 4: the closing lines and the `done` event name every output the recipe asked
    /// for, built or found up to date, and each is there.
    @Test func buildListsEveryOutputItWrote() throws {
        let built = try Built()
        let expected = [
            "directory": built.image, "mbtiles": built.image + ".mbtiles", "maplibre-offline": built.image + ".maplibre.db",
        ]
        let text = try built.build()
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("image: \(built.image)\n"), "\(text.stdout)")
        for format in ["mbtiles", "maplibre-offline"] {
            #expect(text.stdout.contains("\(format): \(expected[format]!)\n"), "no \(format) line in:\n\(text.stdout)")
        }
        for rebuild in [[], ["--force"]] {
            let json = try built.build(["--json"] + rebuild)
            #expect(json.status == 0, "\(json.stderr)")
            let done = try #require(
                json.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                    .first { $0["event"] as? String == "done" })
            let outputs = try #require(done["outputs"] as? [[String: Any]], "no outputs in \(done)")
            var listed: [String: String] = [:]
            for output in outputs { listed[output["format"] as? String ?? "?"] = output["path"] as? String }
            #expect(listed == expected)
            for path in listed.values { #expect(FileManager.default.fileExists(atPath: path), "\(path)") }
        }
    }
}
