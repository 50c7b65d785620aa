import Foundation
import MapFormat
import MapIO

/// The tile databases among an image's files: SQLite files in MBTiles' shape (a `tiles` table of
/// `zoom_level`, `tile_column`, `tile_row` with TMS rows, and `tile_data`), as map data providers
/// ship them per region. The tile outputs (`mbtiles`, `maplibre-offline`) copy their tiles with
/// SQLite's `ATTACH`, so no tile passes through Swift.
struct TileDatabases {
    /// One tile database: the region whose bundle holds it and its path in the store.
    struct Source {
        let region: OutputRegion
        let path: String
    }

    /// Every tile database of `regions`, in region order, then path order.
    let sources: [Source]

    init(regions: [OutputRegion], store: String) throws {
        var found: [Source] = []
        for region in regions.sorted(by: { $0.id < $1.id }) {
            for file in region.files where try TileDatabases.isTileDatabase(store + "/" + file) {
                found.append(Source(region: region, path: store + "/" + file))
            }
        }
        sources = found
    }

    /// SQLite's file header, the first 16 bytes of every database.
    private static let sqliteMagic = Data("SQLite format 3\u{0}".utf8)

    /// Whether the file at `path` is a SQLite database with an MBTiles `tiles` table.
    static func isTileDatabase(_ path: String) throws -> Bool {
        guard let file = FileHandle(forReadingAtPath: path) else { return false }
        let head = try? file.read(upToCount: 16)
        try? file.close()
        guard head == sqliteMagic else { return false }
        let database = try SQLiteDatabase(path: path, readOnly: true)
        let columns = try database.query("SELECT name FROM pragma_table_info('tiles')").map { try $0["name", as: String.self] }
        return Set(["zoom_level", "tile_column", "tile_row", "tile_data"]).isSubset(of: columns)
    }

    /// Runs `body` in one transaction with the tile database `source` attached to `database` as
    /// `src` (attached outside it: SQLite detaches only outside a transaction).
    static func attached<T>(_ source: Source, to database: SQLiteDatabase, _ body: () throws -> T) throws -> T {
        _ = try database.query("ATTACH DATABASE ? AS src", [.text(source.path)])
        defer { try? database.execute("DETACH DATABASE src") }
        return try database.transaction(body)
    }

    /// A new output database at `path` whose bytes are a function of what goes in (fixed page
    /// size, no journal: nothing to roll back into on a fresh file that is staged, never live).
    /// Nothing is synced while it fills; `finish` makes the whole file durable once.
    static func create(_ path: String) throws -> SQLiteDatabase {
        let database = try SQLiteDatabase(path: path)
        try database.execute("PRAGMA page_size = 4096; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")
        return database
    }

    /// Closes the output database at `path` and syncs it (before it is renamed into place).
    static func finish(_ database: consuming SQLiteDatabase, path: String) throws {
        _ = consume database
        try FileSystem.syncFile(path)
    }

    /// The sources' common MBTiles `format` (nil when they differ or none says).
    func commonFormat() throws -> String? {
        var formats = Set<String>()
        for source in sources {
            let database = try SQLiteDatabase(path: source.path, readOnly: true)
            let hasMetadata = try database.firstRow("SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = 'metadata'") != nil
            guard hasMetadata, let row = try database.firstRow("SELECT value FROM metadata WHERE name = 'format'") else { return nil }
            formats.insert(try row["value", as: String.self])
        }
        return formats.count == 1 ? formats.first : nil
    }

    /// `[west, south, east, north]` around every box in `boxes` (nil when none is known).
    static func union(_ boxes: [[Double]?]) -> [Double]? {
        let known = boxes.compactMap { $0 }.filter { $0.count == 4 }
        guard !known.isEmpty else { return nil }
        return [known.map { $0[0] }.min()!, known.map { $0[1] }.min()!, known.map { $0[2] }.max()!, known.map { $0[3] }.max()!]
    }

    /// Seconds since 1970 of an ISO 8601 build time (0 when it does not parse).
    static func epoch(_ built: String) -> Int64 {
        Int64(ISO8601DateFormatter().date(from: built)?.timeIntervalSince1970 ?? 0)
    }
}
