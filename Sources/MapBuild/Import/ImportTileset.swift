import MapFormat
import MapIO

/// The `--tiles` MBTiles file (or the scratch MBTiles a PMTiles archive became, `ImportPMTiles`),
/// opened read-only: its metadata and tile count. Tiles are read by SQLite itself
/// (`ImportPlacement` walks the index, `ImportDatabases` copies the bytes).
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

    /// Opens the MBTiles at `path`; errors name `name` (the `--tiles` file; `path` by default).
    init(path: String, name: String? = nil) throws(ImportError) {
        self.path = FileSystem.absolute(path)
        let name = name ?? path
        self.name = name
        guard FileSystem.exists(path) else { throw .unreadable(file: name, reason: "no such file") }
        do {
            guard try TileDatabases.hasTilesTable(path) else {
                throw ImportError.badTileset(
                    file: name, reason: "no SQLite 'tiles' table with zoom_level, tile_column, tile_row, tile_data (MBTiles 1.3)")
            }
            database = try SQLiteDatabase(path: path, readOnly: true)
            var metadata: [String: String] = [:]
            if try database.firstRow("SELECT 1 AS one FROM sqlite_master WHERE name = 'metadata'") != nil {
                for row in try database.query("SELECT name, value FROM metadata WHERE name IS NOT NULL AND value IS NOT NULL") {
                    metadata[try row["name", as: String.self]] = try row["value", as: String.self]
                }
            }
            self.metadata = metadata
            count = Int(try database.firstRow("SELECT count(*) AS n FROM tiles")?["n", as: Int64.self] ?? 0)
        } catch let error as ImportError {
            throw error
        } catch {
            throw .badTileset(file: name, reason: "\(error)")
        }
    }
}
