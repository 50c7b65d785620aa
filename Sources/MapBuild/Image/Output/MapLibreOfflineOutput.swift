import Foundation
import MapFormat
import MapIO

/// The image's tiles as a MapLibre Native offline database (schema version 6), `<image>.maplibre.db`,
/// which an app merges into its own with `mergeOfflineRegions`: one offline region per recipe
/// `include` entry (its tiles and those of the regions it brought), with the bounds of those of
/// its regions that hold tiles (`TilesetExtent.regions(_:holdingTilesOf:)`) and their zoom range,
/// and none for the cache seed (its tiles stay in the seed). Tiles are stored under the URL template `mappack://<catalog>/{z}/{x}/{y}` (the app's style
/// names the same template for its source); the style itself is the app's (no `resources` rows).
/// Tiles are stored as MapLibre Native stores them: its reader un-deflates a zlib stream when
/// `compressed = 1` and otherwise parses the bytes as they are (it un-gzips only in its
/// `mbtiles://` reader), so gzipped sources are re-wrapped as zlib with `compressed = 1`.
struct MapLibreOfflineOutput: SingleFileOutput {
    static let fileExtension = ".maplibre.db"
    /// The schema version MapLibre Native's offline database has (`PRAGMA user_version`).
    static let schemaVersion = 6

    var phase: BuildPhase? { .maplibreOffline }

    static func urlTemplate(catalog: String) -> String { "mappack://\(catalog)/{z}/{x}/{y}" }

    func stage(_ source: ImageOutputSource) throws -> String {
        let name = publishedName(imageName: source.imageName)
        let regions = try source.regions()
        let tiles = try source.tileDatabases(regions)
        _ = try tiles.commonFormat()
        let template = MapLibreOfflineOutput.urlTemplate(catalog: source.catalog)
        let accessed = TileDatabases.epoch(source.built)
        let path = source.stagingFolder + "/" + name
        let database = try TileDatabases.create(path)
        try database.execute(MapLibreOfflineOutput.schema + "\nPRAGMA user_version = \(MapLibreOfflineOutput.schemaVersion);")
        do {
            let groups = Dictionary(grouping: regions, by: \.broughtBy)
            for root in groups.keys.sorted() {
                let members = groups[root]!
                let top = members.first { $0.id == root }
                let description = try CanonicalJSON.encode(["id": root.rawValue, "name": top?.name ?? root.rawValue])
                _ = try database.query("INSERT INTO regions (definition, description) VALUES ('{}', ?)", [.blob(description)])
                let regionID = try database.firstRow("SELECT last_insert_rowid() AS id")!["id", as: Int64.self]
                for tileSource in tiles.sources where tileSource.region.broughtBy == root {
                    // Between databases: a large build stops here at a signal instead of copying every tile.
                    try Task.checkCancellation()
                    try TileDatabases.attached(tileSource, to: database) {
                        try MapLibreOfflineOutput.copyTiles(into: database, from: tileSource, template: template, accessed: accessed)
                        _ = try database.query(
                            """
                            INSERT OR IGNORE INTO region_tiles (region_id, tile_id)
                            SELECT ?, t.id FROM src.tiles s JOIN tiles t ON t.url_template = ? AND t.pixel_ratio = 1
                              AND t.z = s.zoom_level AND t.x = s.tile_column AND t.y = (1 << s.zoom_level) - 1 - s.tile_row
                            """, [.integer(regionID), .text(template)])
                    }
                }
                let zooms = try database.firstRow(
                    """
                    SELECT min(t.z) AS low, max(t.z) AS high FROM region_tiles r JOIN tiles t ON t.id = r.tile_id WHERE r.region_id = ?
                    """, [.integer(regionID)])
                let low = try zooms?["low", as: Int64?.self] ?? 0
                let high = try zooms?["high", as: Int64?.self] ?? 0
                // MapLibre's tile-pyramid definition: bounds as [south, west, north, east].
                let box = TileDatabases.union(TilesetExtent.regions(members, holdingTilesOf: tiles).map(\.bbox)) ?? TilesetExtent.world
                let definition =
                    "{\"style_url\":\"mappack://\(source.catalog)/style.json\",\"bounds\":[\(box[1]),\(box[0]),\(box[3]),\(box[2])],"
                    + "\"min_zoom\":\(Double(low)),\"max_zoom\":\(Double(high)),\"pixel_ratio\":1.0,\"include_ideographs\":false}"
                _ = try database.query("UPDATE regions SET definition = ? WHERE id = ?", [.text(definition), .integer(regionID)])
            }
        }
        try TileDatabases.finish(database, path: path, sync: source.sync)
        return name
    }

    /// Largest tile accepted once inflated (a decompression bomb stops the build, naming the file).
    static let maxTileBytes = 64 << 20

    /// Copies the attached `src.tiles` into `tiles` (TMS rows turned to XYZ): gzip re-wrapped as zlib
    /// and zlib kept, both with `compressed = 1`; other bytes as they are with `compressed = 0`.
    static func copyTiles(into database: SQLiteDatabase, from source: TileDatabases.Source, template: String, accessed: Int64) throws {
        let insert = """
            INSERT OR IGNORE INTO tiles (url_template, pixel_ratio, z, x, y, data, compressed, accessed, must_revalidate)
            VALUES (?, 1, ?, ?, ?, ?, ?, ?, 0)
            """
        var failure: (any Error)?
        try database.forEachRow("SELECT zoom_level, tile_column, tile_row, tile_data FROM src.tiles ORDER BY zoom_level, tile_column, tile_row") {
            row throws(SQLiteError) in
            guard failure == nil else { return }
            let z = try row["zoom_level", as: Int64.self]
            let x = try row["tile_column", as: Int64.self]
            let y = (Int64(1) << z) - 1 - (try row["tile_row", as: Int64.self])
            let data = try row["tile_data", as: Data?.self] ?? Data()
            var stored = data
            var compressed: Int64 = 0
            switch Zlib.wrapping(of: data) {
            case .gzip:
                do { stored = try Zlib.deflate(try Zlib.inflate(data, limit: maxTileBytes)) } catch {
                    failure = source.refused("tile \(z)/\(x)/\(y) is not valid gzip: \(error)")
                    return
                }
                compressed = 1
            case .zlib: compressed = 1
            case .none: break
            }
            _ = try database.query(
                insert, [.text(template), .integer(z), .integer(x), .integer(y), .blob(stored), .integer(compressed), .integer(accessed)])
        }
        if let failure { throw failure }
    }

    /// The columns a cached resource and a cached tile share, in MapLibre's order (each line as
    /// `schema` writes it).
    private static let cachedColumns = """
          expires INTEGER,
          modified INTEGER,
          etag TEXT,
          data BLOB,
          compressed INTEGER NOT NULL DEFAULT 0,
          accessed INTEGER NOT NULL,
          must_revalidate INTEGER NOT NULL DEFAULT 0,
        """

    /// MapLibre Native's offline schema, version 6 (tables, columns and indexes as the library
    /// creates them).
    static let schema = """
        CREATE TABLE resources (
          id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
          url TEXT NOT NULL,
          kind INTEGER NOT NULL,
        \(cachedColumns)
          UNIQUE (url)
        );
        CREATE TABLE tiles (
          id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
          url_template TEXT NOT NULL,
          pixel_ratio INTEGER NOT NULL,
          z INTEGER NOT NULL,
          x INTEGER NOT NULL,
          y INTEGER NOT NULL,
        \(cachedColumns)
          UNIQUE (url_template, pixel_ratio, z, x, y)
        );
        CREATE TABLE regions (
          id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
          definition TEXT NOT NULL,
          description BLOB
        );
        CREATE TABLE region_resources (
          region_id INTEGER NOT NULL REFERENCES regions(id) ON DELETE CASCADE,
          resource_id INTEGER NOT NULL REFERENCES resources(id),
          UNIQUE (region_id, resource_id)
        );
        CREATE TABLE region_tiles (
          region_id INTEGER NOT NULL REFERENCES regions(id) ON DELETE CASCADE,
          tile_id INTEGER NOT NULL REFERENCES tiles(id),
          UNIQUE (region_id, tile_id)
        );
        CREATE INDEX resources_accessed ON resources (accessed);
        CREATE INDEX tiles_accessed ON tiles (accessed);
        CREATE INDEX region_resources_resource_id ON region_resources (resource_id);
        CREATE INDEX region_tiles_tile_id ON region_tiles (tile_id);
        """
}
