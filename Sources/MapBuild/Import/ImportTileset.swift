import MapFormat
import MapIO

/// The `--tiles` MBTiles file (or the scratch MBTiles a PMTiles archive became, `ImportPMTiles`),
/// opened read-only: its metadata and tile count. Tiles are read by SQLite itself
/// (`ImportPlacement` walks the index, `ImportDatabases` copies the bytes).
///
/// A tileset is input nobody here wrote, so it is read by `UntrustedDatabase`'s rules: `tiles` and
/// `metadata` must be plain tables (no view, virtual table, generated column or trigger: a
/// recursive view never ends; the one view read is tippecanoe's and mb-util's `tiles` over `map`
/// and `images`, and then only those two plain tables, `TilesLayout`), the schema is untrusted, and
/// every read, here and in the passes that follow, runs under a work limit that grows with the
/// file's size (`limited`). A tile may take at most `maxTileBytes` (checked in the first pass,
/// `ImportPlacement`); a metadata value is copied into every output database, so it may take at
/// most `maxMetadataValueBytes`.
struct ImportTileset {
    /// The MBTiles file SQLite reads.
    let path: String
    /// The file the user gave (`--tiles`), which errors name.
    let name: String
    let database: SQLiteDatabase
    /// The `metadata` table (empty when there is none).
    let metadata: [String: String]
    /// Rows of `tiles`; for a PMTiles archive, the tiles it addresses (a shard's scratch holds
    /// only the tiles its regions can meet, `ImportPMTiles.fill(_:wanted:)`).
    private(set) var count: Int
    /// For a PMTiles archive, its highest zoom with tiles (`ImportPMTiles.Survey`), which a shard's
    /// scratch may not hold.
    private(set) var archiveMaxZoom: Int?
    /// Where the tiles are: the `tiles` table, or the `map` and `images` tables under the `tiles`
    /// view that tippecanoe and mb-util write, read through mappack's own join (`relation(in:)`).
    let layout: TilesLayout
    /// SQLite steps the import's reads of this file may take, per connection and pass
    /// (`UntrustedDatabase.workLimit`).
    let workLimit: Int64

    /// The longest tile an import copies (one SQLite blob in every output database); PMTiles
    /// archives are held to it too.
    static let maxTileBytes = 8 << 20
    /// The longest metadata value, which every region's `tiles.db` gets a copy of.
    static let maxMetadataValueBytes = 1 << 20
    /// The most bytes all metadata rows may take together.
    static let maxMetadataBytes = 4 << 20

    /// Opens the MBTiles at `path`; errors name `name` (the `--tiles` file; `path` by default).
    init(path: String, name: String? = nil) throws(ImportError) {
        self.path = FileSystem.absolute(path)
        let name = name ?? path
        self.name = name
        guard FileSystem.exists(path) else { throw .unreadable(file: name, reason: "no such file") }
        let bytes: Int64
        do { bytes = try FileSystem.status(path)?.size ?? 0 } catch { throw .unreadable(file: name, reason: "\(error)") }
        let workLimit = UntrustedDatabase.workLimit(bytes: bytes)
        self.workLimit = workLimit
        do {
            guard try TileDatabases.hasTilesTable(path) else {
                throw ImportError.badTileset(
                    file: name, reason: "no SQLite 'tiles' table with zoom_level, tile_column, tile_row, tile_data (MBTiles 1.3)")
            }
            let database = try UntrustedDatabase.open(path: path)
            self.database = database
            (metadata, count, layout) = try Self.limited(database, workLimit: workLimit, name: name) {
                () throws -> ([String: String], Int, TilesLayout) in
                let layout = try TilesLayout.of(database, name: name)
                if let refusal = try UntrustedDatabase.refusal(of: "metadata", in: database) {
                    throw ImportError.badTileset(file: name, reason: refusal + "; mappack import reads plain tables only: copy the rows into one")
                }
                let count = try database.firstRow("SELECT count(*) AS n FROM \(layout.relation(in: "main"))")?["n", as: Int64.self] ?? 0
                return (try Self.metadata(of: database, name: name), Int(count), layout)
            }
        } catch let error as ImportError {
            throw error
        } catch {
            throw .badTileset(file: name, reason: "\(error)")
        }
    }

    /// The scratch MBTiles a PMTiles archive became (`path`), with the count and zooms of the whole
    /// archive its walk found; errors name `name`, the `--tiles` file or URL.
    init(converted path: String, name: String, survey: ImportPMTiles.Survey) throws(ImportError) {
        try self.init(path: path, name: name)
        count = survey.tiles
        archiveMaxZoom = survey.zooms?.upperBound
    }

    /// The `metadata` rows, each name and value checked against the caps first (in SQL, so a
    /// huge value is never read into memory).
    private static func metadata(of database: SQLiteDatabase, name: String) throws -> [String: String] {
        guard try database.firstRow("SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = 'metadata' COLLATE NOCASE") != nil
        else { return [:] }
        let sizes = "length(CAST(name AS BLOB)) + length(CAST(value AS BLOB))"
        if let row = try database.firstRow(
            """
            SELECT CAST(substr(name, 1, 64) AS TEXT) AS name, length(CAST(value AS BLOB)) AS bytes FROM metadata
            WHERE name IS NOT NULL AND value IS NOT NULL AND length(CAST(value AS BLOB)) > ? LIMIT 1
            """,
            [.integer(Int64(maxMetadataValueBytes))])
        {
            throw ImportError.badTileset(
                file: name,
                reason:
                    "metadata '\(try row["name", as: String.self])' takes \(try row["bytes", as: Int64.self]) bytes, over the 1 MiB a metadata value may take (every region's tiles.db gets a copy); shorten or drop it (tippecanoe: --no-tile-stats)"
            )
        }
        let total =
            try database.firstRow(
                "SELECT coalesce(sum(\(sizes)), 0) AS bytes FROM metadata WHERE name IS NOT NULL AND value IS NOT NULL")?["bytes", as: Int64.self]
            ?? 0
        guard total <= Int64(maxMetadataBytes) else {
            throw ImportError.badTileset(
                file: name,
                reason:
                    "the metadata rows take \(total) bytes together, over the 4 MiB mappack copies into every region's tiles.db; drop the rows readers do not need"
            )
        }
        var metadata: [String: String] = [:]
        for row in try database.query("SELECT name, value FROM metadata WHERE name IS NOT NULL AND value IS NOT NULL") {
            metadata[try row["name", as: String.self]] = try row["value", as: String.self]
        }
        return metadata
    }

    /// Runs `body` on `database` (this tileset's connection, or one it is attached to) under the
    /// tileset's work limit, turning a stop at the limit into bad input naming the file.
    func limited<T>(_ database: SQLiteDatabase, _ body: () throws -> T) throws -> T {
        try Self.limited(database, workLimit: workLimit, name: name, body)
    }

    /// What a writer needs to copy tiles out of the tileset on a connection of its own, on any thread.
    struct Copying: Sendable {
        let path: String
        let name: String
        let metadata: [String: String]
        let layout: TilesLayout

        fileprivate let workLimit: Int64

        /// `ImportTileset.limited` on the writer's connection.
        func limited<T>(_ database: SQLiteDatabase, _ body: () throws -> T) throws -> T {
            try ImportTileset.limited(database, workLimit: workLimit, name: name, body)
        }
    }

    /// The tileset for writers on other threads.
    var copying: Copying { Copying(path: path, name: name, metadata: metadata, layout: layout, workLimit: workLimit) }

    /// The highest zoom of the tiles, nil when there are none or it is no zoom (the first pass refuses
    /// such a row, naming it). `max()` alone, so SQLite answers from the index's end, not a scan.
    func maxZoom() throws -> Int? {
        if let archiveMaxZoom { return archiveMaxZoom }
        let value = try limited(database) {
            try database.firstRow("SELECT max(zoom_level) AS z FROM \(layout.relation(in: "main"))").map { try $0["z"] } ?? SQLValue.null
        }
        guard case .integer(let zoom) = value, (0...30).contains(zoom) else { return nil }
        return Int(zoom)
    }

    private static func limited<T>(_ database: SQLiteDatabase, workLimit: Int64, name: String, _ body: () throws -> T) throws -> T {
        do {
            return try database.withWorkLimit(steps: workLimit, body)
        } catch let error as SQLiteWorkLimitError {
            throw ImportError.badTileset(
                file: name,
                reason:
                    "reading it took more than \(error.steps) SQLite steps, far more than a tileset of \(UntrustedDatabase.bytes(ofWorkLimit: workLimit)) bytes needs"
            )
        }
    }
}

/// Where an MBTiles tileset keeps its tiles. The `tiles` view tippecanoe and mb-util write over
/// `map` (the addresses) and `images` (the bytes, stored once) is never run: mappack reads those two
/// plain tables through its own join, which means what the writers' view means. Any other view,
/// and a `tiles`, `map` or `images` that is not a plain table, is refused.
enum TilesLayout: Sendable {
    /// A plain `tiles` table.
    case table
    /// `map` and `images`, joined on `tile_id` (and on `zoom_level` when `images` has one, as
    /// tippecanoe's does).
    case mapAndImages(byZoom: Bool)

    /// The tiles of the database attached as `schema` (`main` for the tileset's own connection), as
    /// a relation with `zoom_level`, `tile_column`, `tile_row` and `tile_data`.
    func relation(in schema: String) -> String {
        switch self {
        case .table: return schema + ".tiles"
        case .mapAndImages(let byZoom):
            return "(SELECT m.zoom_level AS zoom_level, m.tile_column AS tile_column, m.tile_row AS tile_row, i.tile_data AS tile_data "
                + "FROM \(schema).map AS m JOIN \(schema).images AS i ON i.tile_id = m.tile_id"
                + (byZoom ? " AND i.zoom_level = m.zoom_level)" : ")")
        }
    }

    /// The layout of `database` (the tileset `name`), refusing what must not be read.
    static func of(_ database: SQLiteDatabase, name: String) throws -> TilesLayout {
        let plainTablesOnly =
            "; mappack import reads a plain tiles table, or the map and images tables tippecanoe and mb-util write: copy the rows into a plain table"
        guard let refusal = try UntrustedDatabase.refusal(of: "tiles", in: database) else { return .table }
        func exists(_ table: String, as types: [String] = ["table", "view"]) throws -> Bool {
            let found = try database.firstRow("SELECT type FROM sqlite_master WHERE name = ? COLLATE NOCASE", [.text(table)])
            return try found.map { types.contains(try $0["type", as: String.self]) } ?? false
        }
        func columns(_ table: String) throws -> Set<String> {
            Set(try database.query("SELECT name FROM pragma_table_xinfo(?)", [.text(table)]).map { try $0["name", as: String.self].lowercased() })
        }
        guard try exists("tiles", as: ["view"]), try exists("map"), try exists("images") else {
            throw ImportError.badTileset(file: name, reason: refusal + plainTablesOnly)
        }
        for table in ["map", "images"] {
            if let problem = try UntrustedDatabase.refusal(of: table, in: database) {
                throw ImportError.badTileset(file: name, reason: "'tiles' is a view over map and images, and " + problem + plainTablesOnly)
            }
        }
        let images = try columns("images")
        guard Set(["zoom_level", "tile_column", "tile_row", "tile_id"]).isSubset(of: try columns("map")),
            Set(["tile_data", "tile_id"]).isSubset(of: images)
        else {
            throw ImportError.badTileset(
                file: name, reason: "'tiles' is a view, but map and images lack the columns tippecanoe and mb-util give them" + plainTablesOnly)
        }
        return .mapAndImages(byZoom: images.contains("zoom_level"))
    }
}
