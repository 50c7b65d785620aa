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

    /// Writes the `tiles.db` of every destination of `pass` and of every region's overview it found,
    /// each in its bundle folder under `folder`'s `bundles/`, `width` at once (`BlockingWork.mapWaiting`:
    /// the first failing bundle in this order gives the error). Returns the bundles by name.
    static func writeTileBundles(
        of pass: ImportPlacement.Pass, layout: ImportLayout, scratch: String, tileset: ImportTileset.Copying, folder: String, width: Int
    ) throws -> [String: ImportShardRecord.Bundle] {
        let regions = layout.regions
        typealias Job = (bundle: ImportLayout.Bundle, destination: Int, name: String, bbox: [Double], center: [Double], regions: [RegionID])
        var jobs: [Job] = pass.destinations.enumerated().map { destination, members in
            let name =
                members.count == 1 ? regions[members[0]].id.rawValue : "shared: " + members.map { regions[$0].id.rawValue }.joined(separator: ", ")
            return (
                layout.tileBundle(for: members), destination, name, layout.bbox(of: members), regions[members[0]].center,
                members.map { regions[$0].id }
            )
        }
        jobs += pass.overviews.sorted().map { region in
            let overview = regions[region]
            return (
                ImportOverview.bundle(for: overview), ImportOverview.destination(of: region), overview.id.rawValue + " overview", overview.bbox,
                overview.center, [overview.id]
            )
        }
        _ = try BlockingWork.mapWaiting(jobs, width: width) { job in
            let path = folder + "/bundles/" + job.bundle.name + "/" + job.bundle.file
            try writeTiles(
                to: path, destination: job.destination, scratch: scratch, tileset: tileset, name: job.name, bbox: job.bbox, center: job.center)
            // The output is synced as a whole at the end (`ImportOutput`): its disk writes start now.
            Writeback.kernel.start(path: path)
        }
        return Dictionary(jobs.map { ($0.bundle.name, ImportShardRecord.Bundle(kind: $0.bundle.kind, regions: $0.regions)) }) { _, last in last }
    }

    /// Writes the `tiles.db` of scratch destination `destination`: its tiles copied from the
    /// tileset in the order zoom, column, row, then the metadata.
    static func writeTiles(
        to path: String, destination: Int, scratch: String, tileset: ImportTileset.Copying, name: String, bbox: [Double], center: [Double]
    ) throws {
        var metadata = tileset.metadata.filter { !ownMetadata.contains($0.key) }
        metadata["name"] = name
        metadata["bounds"] = boundsText(bbox)
        // MBTiles' `center` is longitude,latitude,zoom; the catalog's is [latitude, longitude].
        let place = String(format: "%.6f,%.6f", center[1], center[0])
        // The tileset is read under its own rules on this connection too: its schema untrusted,
        // the copy under its work limit (`ImportTileset`).
        try write(
            to: path, attaching: [("src", tileset.path), ("p", scratch)],
            rows: """
                SELECT t.zoom_level, t.tile_column, t.tile_row, t.tile_data FROM p.placed AS q
                JOIN \(tileset.layout.relation(in: "src")) AS t ON t.zoom_level = q.z AND t.tile_column = q.x AND t.tile_row = q.y
                WHERE q.dest = ? ORDER BY q.z, q.x, q.y
                """, arguments: [.integer(Int64(destination))], metadata: metadata, center: place
        ) { database, body in try tileset.limited(database, body) }
    }

    /// Writes at `path` the `tiles.db` whose pieces the shards of one import wrote (`pieces`, each
    /// holding the tiles of its shard's run, with the same name, bounds and centre): their tiles
    /// gathered in `scratch`, then written in the order zoom, column, row with the metadata, as
    /// `writeTiles` writes them all at once, so the bytes are the unsharded import's.
    static func joinPieces(_ pieces: [String], into path: String, scratch: String) throws {
        var metadata: [String: String] = [:]
        do {
            let gathered = try TileDatabases.create(scratch)
            try gathered.execute("CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB); BEGIN;")
            for (index, piece) in pieces.enumerated() {
                try gathered.query("ATTACH DATABASE ? AS piece", [.text(piece)])
                try gathered.execute(
                    "INSERT INTO main.tiles SELECT zoom_level, tile_column, tile_row, tile_data FROM piece.tiles ORDER BY zoom_level, tile_column, tile_row"
                )
                if index == 0 {
                    for row in try gathered.query("SELECT name, value FROM piece.metadata") {
                        metadata[try row["name", as: String.self]] = try row["value", as: String.self]
                    }
                }
                try gathered.execute("COMMIT; DETACH DATABASE piece; BEGIN;")
            }
            try gathered.execute("COMMIT")
        }
        guard let center = metadata["center"], let comma = center.lastIndex(of: ",") else {
            throw ImportError.badShards(reason: "\(pieces[0]): a piece of a tiles.db without its metadata's centre; make the shards again")
        }
        for name in ["minzoom", "maxzoom", "center"] { metadata[name] = nil }
        try write(
            to: path, attaching: [("p", scratch)],
            rows: "SELECT zoom_level, tile_column, tile_row, tile_data FROM p.tiles ORDER BY zoom_level, tile_column, tile_row", arguments: [],
            metadata: metadata, center: String(center[..<comma])
        ) { _, body in try body() }
        try FileSystem.removeFile(scratch)
    }

    /// A new MBTiles file at `path` holding the rows `rows` selects (from the databases `attaching`
    /// names) and `metadata` with `minzoom`, `maxzoom` and `center` (`center`, then the lowest zoom)
    /// from the tiles: one fixed sequence of statements, so the same rows give the same bytes.
    private static func write(
        to path: String, attaching: [(name: String, path: String)], rows: String, arguments: [SQLValue], metadata: [String: String],
        center: String, limited: (SQLiteDatabase, () throws -> Void) throws -> Void
    ) throws {
        try FileSystem.makeDirectories(FileSystem.parent(path))
        let database = try TileDatabases.createMBTiles(path)
        try database.execute("PRAGMA trusted_schema = OFF")
        for attached in attaching { try database.query("ATTACH DATABASE ? AS \(attached.name)", [.text(attached.path)]) }
        // A deferred transaction: it locks the tileset and the scratch table only to read them, so
        // shards on one machine can copy from one tileset at the same time.
        try database.execute("BEGIN")
        do {
            try limited(database) {
                _ = try database.query("INSERT INTO main.tiles (zoom_level, tile_column, tile_row, tile_data) " + rows, arguments)
            }
            let zooms = try database.firstRow("SELECT min(zoom_level) AS low, max(zoom_level) AS high FROM main.tiles")
            let low = try zooms?["low", as: Int64?.self] ?? 0
            let high = try zooms?["high", as: Int64?.self] ?? 0
            var metadata = metadata
            metadata["center"] = center + ",\(low)"
            metadata["minzoom"] = String(low)
            metadata["maxzoom"] = String(high)
            try database.executeMany(
                "INSERT INTO main.metadata (name, value) VALUES (?, ?)", metadata.sorted { $0.key < $1.key }.map { [.text($0.key), .text($0.value)] })
            try database.execute("COMMIT")
        } catch {
            try? database.execute("ROLLBACK")
            throw error
        }
        try database.execute(attaching.map { "DETACH DATABASE \($0.name);" }.joined(separator: " "))
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
