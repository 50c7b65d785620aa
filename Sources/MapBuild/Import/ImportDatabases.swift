import Foundation
import MapFormat
import MapIO

/// The second pass of an import: each region's or shared bundle's `tiles.db` (MBTiles 1.3, tile
/// bytes copied by SQLite from the tileset), and each region's `search.db`. Every database is
/// written in one fixed order (tiles by zoom, column, row; metadata by name) with a fixed page
/// size and no journal, so the same inputs give the same bytes.
enum ImportDatabases {
    /// Tileset metadata rows a region's database sets itself rather than copies.
    static let ownMetadata: Set<String> = ["name", "bounds", "center", "minzoom", "maxzoom"]

    /// MBTiles `bounds` cannot cross the antimeridian or leave Web Mercator's square.
    static func boundsText(_ bbox: [Double]) -> String {
        var (west, south, east, north) = (bbox[0], bbox[1], bbox[2], bbox[3])
        if west > east { (west, east) = (-180, 180) }
        south = max(south, -MercatorShape.latitudeLimit)
        north = min(north, MercatorShape.latitudeLimit)
        return [west, south, east, north].map { String(format: "%.6f", $0) }.joined(separator: ",")
    }

    static func writeTiles(
        to path: String, destination: Int, scratch: String, tileset: ImportTileset, name: String, bbox: [Double], center: [Double]
    ) throws {
        try FileSystem.makeDirectories(FileSystem.parent(path))
        let database = try TileDatabases.createMBTiles(path)
        // The tileset is read under its own rules on this connection too: its schema untrusted,
        // the copy under its work limit (`ImportTileset`).
        try database.execute("PRAGMA trusted_schema = OFF")
        try database.query("ATTACH DATABASE ? AS src", [.text(tileset.path)])
        try database.query("ATTACH DATABASE ? AS p", [.text(scratch)])
        // A deferred transaction: it locks the tileset and the scratch table only to read them, so
        // shards on one machine can copy from one tileset at the same time.
        try database.execute("BEGIN")
        do {
            try tileset.limited(database) {
                _ = try database.query(
                    """
                    INSERT INTO main.tiles (zoom_level, tile_column, tile_row, tile_data)
                    SELECT t.zoom_level, t.tile_column, t.tile_row, t.tile_data FROM p.placed AS q
                    JOIN \(tileset.layout.relation(in: "src")) AS t ON t.zoom_level = q.z AND t.tile_column = q.x AND t.tile_row = q.y
                    WHERE q.dest = ? ORDER BY q.z, q.x, q.y
                    """, [.integer(Int64(destination))])
            }
            let zooms = try database.firstRow("SELECT min(zoom_level) AS low, max(zoom_level) AS high FROM main.tiles")
            let low = try zooms?["low", as: Int64?.self] ?? 0
            let high = try zooms?["high", as: Int64?.self] ?? 0
            var metadata = tileset.metadata.filter { !ownMetadata.contains($0.key) }
            metadata["name"] = name
            metadata["bounds"] = boundsText(bbox)
            // MBTiles' `center` is longitude,latitude,zoom; the catalog's is [latitude, longitude].
            metadata["center"] = String(format: "%.6f,%.6f,%d", center[1], center[0], Int(low))
            metadata["minzoom"] = String(low)
            metadata["maxzoom"] = String(high)
            try database.executeMany(
                "INSERT INTO main.metadata (name, value) VALUES (?, ?)", metadata.sorted { $0.key < $1.key }.map { [.text($0.key), .text($0.value)] })
            try database.execute("COMMIT")
        } catch {
            try? database.execute("ROLLBACK")
            throw error
        }
        try database.execute("DETACH DATABASE src; DETACH DATABASE p;")
    }

    static func writeSearch(to path: String, region: ImportRegion, places: ImportPlaces.RegionPlaces) throws {
        try FileSystem.makeDirectories(FileSystem.parent(path))
        let database = try TileDatabases.create(path)
        try database.execute(
            """
            CREATE VIRTUAL TABLE places USING fts5(
                name, alternate_names, kind UNINDEXED, lat UNINDEXED, lon UNINDEXED, population UNINDEXED,
                geonameid UNINDEXED, tokenize = 'unicode61 remove_diacritics 2');
            CREATE TABLE metadata (name TEXT PRIMARY KEY, value TEXT);
            """)
        let english = region.names["en"] ?? region.names.sorted { $0.key < $1.key }.first!.value
        let center = region.center
        let insert = "INSERT INTO places (name, alternate_names, kind, lat, lon, population, geonameid) VALUES (?, ?, ?, ?, ?, ?, ?)"
        let regionRow: [SQLValue] = [
            .text(english), .text(Set(region.names.values).subtracting([english]).sorted().joined(separator: " | ")), .text("region"),
            .real(center[0]), .real(center[1]), .null, .null,
        ]
        try database.transaction {
            try database.executeMany(insert, [regionRow])
            // In batches: the rows of a region of millions of places are never all built at once.
            try places.forEachBatch(4096) { batch in
                try database.executeMany(
                    insert,
                    batch.map { place in
                        [
                            .text(place.name), .text(place.alternateNames), .text(place.kind),
                            .real(ImportRegion.rounded(place.latitude)), .real(ImportRegion.rounded(place.longitude)),
                            place.population.map { .integer($0) } ?? .null, place.geonameid.map { .integer($0) } ?? .null,
                        ]
                    })
            }
            try database.execute("INSERT INTO places (places) VALUES ('optimize')")
            try database.executeMany("INSERT INTO metadata (name, value) VALUES (?, ?)", [[.text("region"), .text(region.id.rawValue)]])
        }
    }
}
