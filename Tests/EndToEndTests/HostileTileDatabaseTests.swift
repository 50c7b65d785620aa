import Foundation
import TestSupport
import Testing

/// Tile databases come in bundles, so they are input nobody here wrote: a `tiles` that is a view
/// (a recursive one never ends), a trigger, a virtual or generated column must not reach the tile
/// outputs. The build refuses the file, naming it, its region and its bundle, and ends promptly.
@Suite struct HostileTileDatabaseTests {
    static let table = "CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);"
    static let oneTile = "INSERT INTO tiles VALUES (0, 0, 0, x'1A');"

    /// (what it is, the SQL that makes it, a word the refusal says).
    static let schemas: [(String, String, String)] = [
        (
            "recursive view",
            """
            CREATE VIEW tiles AS WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c)
            SELECT 0 AS zoom_level, 0 AS tile_column, x AS tile_row, x'00' AS tile_data FROM c;
            """,
            "view"
        ),
        (
            "finite view",
            "CREATE TABLE t (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB); "
                + "INSERT INTO t VALUES (0, 0, 0, x'1A'); CREATE VIEW tiles AS SELECT * FROM t;",
            "view"
        ),
        ("trigger", table + oneTile + "CREATE TRIGGER tiles_touch AFTER INSERT ON tiles BEGIN DELETE FROM tiles; END;", "trigger"),
        ("virtual table", "CREATE VIRTUAL TABLE tiles USING fts5(zoom_level, tile_column, tile_row, tile_data);", "virtual"),
        (
            "generated column",
            "CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB AS (zeroblob(1000)) VIRTUAL); "
                + "INSERT INTO tiles (zoom_level, tile_column, tile_row) VALUES (0, 0, 0);",
            "generated"
        ),
    ]

    @Test(arguments: 0..<schemas.count, ["mbtiles", "maplibre-offline"])
    func buildRefusesTileDatabaseThatIsNotAPlainTableNamingTheFile(_ index: Int, _ format: String) throws {
        let (what, sql, word) = HostileTileDatabaseTests.schemas[index]
        let folder = TemporaryFolder("hostile-tiles")
        let source = try SourceFixture.write(to: folder.join("src"))
        let database = source + "/bundles/li/regions/europe/li/tiles.db"
        try FileManager.default.removeItem(atPath: database)
        let made = try Tool.run("/usr/bin/sqlite3", [database, sql], timeout: 60)
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try Tool.mappack(["publish", source, "--out", folder.join("cat")], timeout: 300).status == 0)
        try SourceFixture.recipe(catalog: folder.join("cat/catalog.json"), include: ["europe/li"], formats: "[directory, \(format)]")
            .write(toFile: folder.join("r.yaml"), atomically: true, encoding: .utf8)

        let build = try Tool.mappack(["build", folder.join("r.yaml"), "--out", folder.join("Output"), "--cache", folder.join("cache")], timeout: 120)
        #expect(!build.timedOut, "\(what): the build did not end")
        #expect(build.status == 1, "\(what): \(build.stderr)")
        #expect(build.stderr.contains("regions/europe/li/tiles.db"), "\(what): \(build.stderr)")
        #expect(build.stderr.contains("europe/li") && build.stderr.contains("sha256:"), "\(what): \(build.stderr)")
        #expect(build.stderr.contains(word), "\(what): \(build.stderr)")
        let output = (try? FileManager.default.contentsOfDirectory(atPath: folder.join("Output"))) ?? []
        #expect(!output.contains { $0.hasSuffix(".mbtiles") || $0.hasSuffix(".maplibre.db") }, "\(output)")
    }
}
