import Foundation
import TestSupport
import Testing

/// Issue 41, "Trust, fourth round": `mappack import` reads tilesets nobody here wrote. A `tiles` or
/// `metadata` that is a view (a recursive one never ends) or has a generated column, a tile or a
/// metadata value past its cap, rows whose address is not three integers or is given twice, a
/// PMTiles archive whose runs or leaf directories unfold far past its size, and region ids that
/// collide as paths are refused as bad input (exit 2), naming the file and what is wrong, and end
/// promptly. Every hostile run is the real binary under a timeout and `prlimit` (address space,
/// file size), so a regression fails its test instead of filling the machine.
@Suite struct ImportHostileTests {
    /// One region around tile 5/16/11 (TMS row 20) and the PMTiles tiles of zoom 0.
    static let regions =
        #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"w","name":"W"},"geometry":{"type":"Polygon","coordinates":[[[-20,-60],[60,-60],[60,60],[-20,60],[-20,-60]]]}}]}"#

    static let table = "CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);"
    static let metadata = "CREATE TABLE metadata (name TEXT, value TEXT); INSERT INTO metadata VALUES ('format', 'pbf');"
    static let oneTile = "INSERT INTO tiles VALUES (5, 16, 20, x'1A');"

    /// Runs `mappack import` on `tiles` with 4 GiB of address space and files of at most 256 MiB.
    static func importBounded(_ folder: TemporaryFolder, tiles: String, regions: String? = nil, timeout: TimeInterval = 90) throws -> Tool.Result {
        let boundaries = folder.join("regions.geojson")
        try Data((regions ?? Self.regions).utf8).write(to: URL(fileURLWithPath: boundaries))
        return try Tool.run(
            "/usr/bin/prlimit",
            [
                "--as=4294967296", "--fsize=268435456", "--", Tool.path("mappack"), "import", "--tiles", tiles, "--regions", boundaries, "--out",
                folder.join("out"),
            ],
            timeout: timeout)
    }

    /// An MBTiles file at `path` made by Debian's `sqlite3` from `sql`.
    static func mbtiles(_ path: String, _ sql: String) throws {
        let made = try Tool.run("/usr/bin/sqlite3", [path, sql], timeout: 60)
        #expect(made.status == 0, "\(made.stderr)")
    }

    /// The refusal every hostile import must give: exit 2, in time, naming the file, no output left.
    static func expectRefused(_ result: Tool.Result, _ folder: TemporaryFolder, file: String, saying words: [String], _ what: String) {
        #expect(!result.timedOut, "\(what): the import did not end")
        #expect(result.status == 2, "\(what): \(result.status) \(result.stderr)")
        #expect(result.stderr.contains(file), "\(what): \(result.stderr)")
        for word in words { #expect(result.stderr.contains(word), "\(what): '\(word)' not in \(result.stderr)") }
        #expect(!FileManager.default.fileExists(atPath: folder.join("out")), "\(what)")
    }

    /// (what it is, the SQL that makes it, what the refusal says).
    static let notPlainTables: [(String, String, String)] = [
        (
            "endless tiles view",
            metadata
                + "CREATE VIEW tiles AS WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c) "
                + "SELECT 5 AS zoom_level, 16 AS tile_column, 20 AS tile_row, zeroblob(100) AS tile_data FROM c;",
            "'tiles' is a view"
        ),
        (
            "endless metadata view",
            table + oneTile
                + "CREATE VIEW metadata AS WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c) "
                + "SELECT 'k' || x AS name, 'v' AS value FROM c;",
            "'metadata' is a view"
        ),
        (
            "tile_data from a view",
            metadata + "CREATE TABLE t (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB); "
                + "INSERT INTO t VALUES (5, 16, 20, x'1A'); "
                + "CREATE VIEW tiles AS SELECT zoom_level, tile_column, tile_row, zeroblob(400000000) AS tile_data FROM t;",
            "'tiles' is a view"
        ),
        (
            "images as a view under the map and images layout",
            metadata + "CREATE TABLE map (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_id TEXT); "
                + "INSERT INTO map VALUES (5, 16, 20, 'a'); CREATE VIEW images AS SELECT zeroblob(400000000) AS tile_data, 'a' AS tile_id; "
                + "CREATE VIEW tiles AS SELECT map.zoom_level AS zoom_level, map.tile_column AS tile_column, map.tile_row AS tile_row, "
                + "images.tile_data AS tile_data FROM map JOIN images ON images.tile_id = map.tile_id;",
            "'images' is a view"
        ),
        (
            "generated tile_data",
            metadata + "CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, "
                + "tile_data BLOB AS (zeroblob(400000000)) VIRTUAL); INSERT INTO tiles (zoom_level, tile_column, tile_row) VALUES (5, 16, 20);",
            "generated column, 'tile_data'"
        ),
    ]

    @Test(arguments: 0..<notPlainTables.count)
    func importRefusesTilesOrMetadataThatAreNotPlainTables(_ index: Int) throws {
        let (what, sql, message) = Self.notPlainTables[index]
        let folder = TemporaryFolder("import-hostile-table")
        let tiles = folder.join("hostile.mbtiles")
        try Self.mbtiles(tiles, sql)
        let result = try Self.importBounded(folder, tiles: tiles)
        Self.expectRefused(result, folder, file: tiles, saying: [message, "plain table"], what)
    }

    /// The `tiles` view mb-util writes over `map` and `images` (no zoom in `images`; tippecanoe's,
    /// with one, is `ImportTests`'): read through mappack's own join, never the view.
    @Test func importReadsTheMapAndImagesTablesUnderATilesView() throws {
        let folder = TemporaryFolder("import-map-images")
        let tiles = folder.join("dedup.mbtiles")
        try Self.mbtiles(
            tiles,
            Self.metadata + "CREATE TABLE map (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_id TEXT); "
                + "CREATE TABLE images (tile_data BLOB, tile_id TEXT); INSERT INTO map VALUES (5, 16, 20, 'a'); INSERT INTO images VALUES (x'1A2B', 'a'); "
                + "CREATE VIEW tiles AS SELECT 0 AS zoom_level, 0 AS tile_column, 0 AS tile_row, x'00' AS tile_data;")
        let result = try Self.importBounded(folder, tiles: tiles)
        #expect(result.status == 0, "\(result.stderr)")
        let copied = try Tool.run(
            "/usr/bin/sqlite3",
            [folder.join("out/bundles/w.tiles/regions/w/tiles.db"), "SELECT zoom_level, tile_column, tile_row, hex(tile_data) FROM tiles"],
            timeout: 60)
        #expect(copied.stdout == "5|16|20|1A2B\n", "\(copied.stdout)\(copied.stderr)")
    }

    @Test func importRefusesATileOverTheCapNamingItsRow() throws {
        let folder = TemporaryFolder("import-hostile-big-tile")
        let tiles = folder.join("big.mbtiles")
        try Self.mbtiles(tiles, Self.metadata + Self.table + "INSERT INTO tiles VALUES (5, 16, 20, zeroblob(9 * 1024 * 1024));")
        let result = try Self.importBounded(folder, tiles: tiles)
        Self.expectRefused(result, folder, file: tiles, saying: ["zoom_level 5, tile_column 16, tile_row 20", "9437184 bytes", "8 MiB"], "big tile")
    }

    @Test func importRefusesAMetadataValueOverTheCap() throws {
        let folder = TemporaryFolder("import-hostile-metadata")
        let tiles = folder.join("meta.mbtiles")
        try Self.mbtiles(tiles, Self.metadata + Self.table + Self.oneTile + "INSERT INTO metadata VALUES ('json', hex(zeroblob(600000)));")
        let result = try Self.importBounded(folder, tiles: tiles)
        Self.expectRefused(result, folder, file: tiles, saying: ["metadata 'json'", "1200000 bytes", "1 MiB"], "big metadata")
    }

    /// (what it is, the rows, what the refusal says).
    static let badAddresses: [(String, String, String)] = [
        ("NULL zoom", "INSERT INTO tiles VALUES (NULL, 16, 20, x'1A');", "zoom_level NULL, tile_column 16, tile_row 20"),
        ("text column", "INSERT INTO tiles VALUES (5, 'sixteen', 20, x'1A');", "zoom_level 5, tile_column 'sixteen', tile_row 20"),
        ("duplicate", "INSERT INTO tiles VALUES (5, 16, 20, x'1A'); INSERT INTO tiles VALUES (5, 16, 20, x'1B');", "more than once"),
    ]

    @Test(arguments: 0..<badAddresses.count)
    func importRefusesRowsWhoseAddressIsNotThreeIntegersOnce(_ index: Int) throws {
        let (what, rows, message) = Self.badAddresses[index]
        let folder = TemporaryFolder("import-hostile-rows")
        let tiles = folder.join("rows.mbtiles")
        try Self.mbtiles(tiles, Self.metadata + Self.table + rows)
        let result = try Self.importBounded(folder, tiles: tiles)
        Self.expectRefused(result, folder, file: tiles, saying: [message, "tiles row"], what)
    }

    /// Writes a PMTiles v3 archive (uncompressed directories unless `gzip`, tile type MVT, one tile
    /// byte) whose directories `shape` names; Python's standard library only.
    static let pmtilesWriter = """
        import gzip, struct, sys
        shape, path = sys.argv[1], sys.argv[2]
        def varint(v):
            out = bytearray()
            while True:
                b, v = v & 0x7F, v >> 7
                if v:
                    out.append(b | 0x80)
                else:
                    out.append(b)
                    return bytes(out)
        def directory(entries):  # (tile id, run length, length, offset)
            out, last = bytearray(varint(len(entries))), 0
            for e in entries:
                out += varint(e[0] - last)
                last = e[0]
            for column in (1, 2):
                for e in entries:
                    out += varint(e[column])
            for e in entries:
                out += varint(e[3] + 1)
            return bytes(out)
        internal, leaves = 1, b""
        if shape == "run":
            root = directory([(0, 4000000000, 1, 0)])
        elif shape == "leaf-bomb":
            leaves = gzip.compress(b"\\x00" * (48 << 20), 9)
            root = gzip.compress(directory([(i, 0, len(leaves), 0) for i in range(1000)]), 9)
            internal = 2
        elif shape == "entries":
            n = 8000000
            root = gzip.compress(varint(n) + b"\\x00" + b"\\x01" * (n - 1) + b"\\x01" * (3 * n), 9)
            internal = 2
        else:
            n = 1000
            ids = [0] * n if shape == "stuck" else list(range(n))
            level3 = directory([])
            level2 = directory([(i, 0, len(level3), 0) for i in ids])
            level1 = directory([(i, 0, len(level2), len(level3)) for i in ids])
            root = directory([(i, 0, len(level1), len(level3) + len(level2)) for i in ids])
            leaves = level3 + level2 + level1
        data = b"\\x1a"
        root_at = 127
        leaves_at = root_at + len(root)
        data_at = leaves_at + len(leaves)
        header = b"PMTiles" + bytes([3])
        header += struct.pack("<11Q", root_at, len(root), data_at, 0, leaves_at, len(leaves), data_at, len(data), 0, 0, 0)
        header += struct.pack("<6B", 1, internal, 1, 1, 0, 14)
        header += struct.pack("<4i", -1800000000, -850000000, 1800000000, 850000000)
        header += struct.pack("<B2i", 0, 0, 0)
        assert len(header) == 127
        with open(path, "wb") as f:
            f.write(header + root + leaves + data)
        """

    /// (shape, what the refusal says).
    @Test(arguments: [
        ("run", "the entry for tile id 0 (run length 4000000000)"),
        ("stuck", "tile ids are not ascending: tile id 0 comes after tile id 0"),
        ("fan-out", "lies outside the range its parent's entry covers"),
        ("entries", "holds 8000000 entries"),
        ("leaf-bomb", "the directories inflate to more than"),
    ])
    func importBoundsWhatAPMTilesArchiveUnfoldsTo(shape: String, message: String) throws {
        let folder = TemporaryFolder("import-hostile-pmtiles")
        let tiles = folder.join("\(shape).pmtiles")
        let made = try Tool.run("/usr/bin/python3", ["-c", Self.pmtilesWriter, shape, tiles], timeout: 120)
        #expect(made.status == 0, "\(made.stderr)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: tiles)[.size] as? Int)
        #expect(size < 64 * 1024, "the hostile archive stays tiny: \(size) bytes")
        let result = try Self.importBounded(folder, tiles: tiles)
        Self.expectRefused(result, folder, file: tiles + ": not a usable PMTiles v3 archive", saying: [message], shape)
    }

    /// A feature of the boundaries file with `id`.
    static func feature(_ id: String) -> String {
        #"{"type":"Feature","properties":{"id":"\#(id)","name":"X"},"geometry":{"type":"Polygon","coordinates":[[[-20,-60],[60,-60],[60,60],[-20,60],[-20,-60]]]}}"#
    }

    @Test(arguments: [("r/a", "r/a/tiles.db"), ("europe/ch", "europe/CH"), ("r/a", "r/A/Search.db/x")])
    func importRefusesRegionIDsThatCollideAsPaths(first: String, second: String) throws {
        let folder = TemporaryFolder("import-hostile-ids")
        let tiles = folder.join("tiles.mbtiles")
        try Self.mbtiles(tiles, Self.metadata + Self.table + Self.oneTile)
        let regions = #"{"type":"FeatureCollection","features":[\#(Self.feature(first)),\#(Self.feature(second))]}"#
        let result = try Self.importBounded(folder, tiles: tiles, regions: regions)
        Self.expectRefused(result, folder, file: folder.join("regions.geojson"), saying: ["'\(first)'", "'\(second)'"], second)
    }

    @Test(arguments: [("europe/CH", "ch", "europe/ch"), ("europe/li/tiles.db", "li", "europe/li")])
    func publishRefusesRegionIDsThatCollideAsPaths(id: String, bundle: String, other: String) throws {
        let folder = TemporaryFolder("publish-hostile-ids")
        let source = try SourceFixture.write(to: folder.join("source"))
        let file = source + "/source.json"
        var document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
        var regions = try #require(document["regions"] as? [[String: Any]])
        regions.append(["id": id, "parent": other, "names": ["en": "Clash"], "bundles": [bundle]])
        document["regions"] = regions
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: file))
        let result = try Tool.mappack(["publish", source, "--out", folder.join("catalog")], timeout: 300)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(file), "\(result.stderr)")
        #expect(result.stderr.contains("'\(id)'") && result.stderr.contains("'\(other)'"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.join("catalog")))
    }
}
