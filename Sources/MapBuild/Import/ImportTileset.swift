import MapFormat
import MapIO

/// The `--tiles` MBTiles file (or the scratch MBTiles a PMTiles archive became, `ImportPMTiles`),
/// opened read-only: its metadata and tile count. Tiles are read by SQLite itself
/// (`ImportPlacement` walks the index, `ImportDatabases` copies the bytes).
///
/// A tileset is input nobody here wrote, so it is read by `UntrustedDatabase`'s rules: `tiles` and
/// `metadata` must be plain tables (no view, virtual table, generated column or trigger: a
/// recursive view never ends), the schema is untrusted, and every read, here and in the passes
/// that follow, runs under a work limit that grows with the file's size (`limited`). A metadata
/// value is copied into every output database, so it may take at most `maxMetadataValueBytes`.
struct ImportTileset {
    /// The MBTiles file SQLite reads.
    let path: String
    /// The file the user gave (`--tiles`), which errors name.
    let name: String
    let database: SQLiteDatabase
    /// The `metadata` table (empty when there is none).
    let metadata: [String: String]
    /// Rows of `tiles`.
    let count: Int
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
            (metadata, count) = try Self.limited(database, workLimit: workLimit, name: name) { () throws -> ([String: String], Int) in
                for table in ["tiles", "metadata"] {
                    if let refusal = try UntrustedDatabase.refusal(of: table, in: database) {
                        throw ImportError.badTileset(
                            file: name,
                            reason: refusal
                                + "; mappack import reads plain tables only (as tippecanoe and pmtiles convert write them): copy the rows into one")
                    }
                }
                return (
                    try Self.metadata(of: database, name: name),
                    Int(try database.firstRow("SELECT count(*) AS n FROM tiles")?["n", as: Int64.self] ?? 0)
                )
            }
        } catch let error as ImportError {
            throw error
        } catch {
            throw .badTileset(file: name, reason: "\(error)")
        }
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
