import Foundation
import MapIO

/// Reading single tiles out of the tile databases, for `mappack serve`: web maps ask by XYZ
/// address, MBTiles stores TMS rows (row 0 at the south), so the row is flipped here.
extension TileDatabases {
    /// One stored tile: its bytes as stored (gzip, zlib or raw) and the database that held it.
    package struct Tile: Sendable {
        package let data: Data
        package let source: Source
    }

    /// The tile at XYZ `zoom`/`x`/`y` from the first source that holds it (a region's before the
    /// overview's), or nil; nil too for an address outside the zoom's grid.
    package func tile(zoom: Int, x: Int, y: Int) throws -> Tile? {
        guard (0...30).contains(zoom), (0..<(1 << zoom)).contains(x), (0..<(1 << zoom)).contains(y) else { return nil }
        let row = (1 << zoom) - 1 - y
        for source in sources where confinedTo.map({ TileDatabases.isReachable(source.path, beneath: $0) }) ?? true {
            let database = try SQLiteDatabase(path: source.path, readOnly: true)
            try database.execute("PRAGMA trusted_schema = OFF")
            let found = try source.limited(database) {
                try database.firstRow(
                    "SELECT tile_data FROM tiles WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?",
                    [.integer(Int64(zoom)), .integer(Int64(x)), .integer(Int64(row))])
            }
            if let data = try found?["tile_data", as: Data?.self] {
                return Tile(data: data, source: source)
            }
        }
        return nil
    }

    /// The lowest and highest zoom any source holds (nil when none holds a tile).
    package func zoomRange() throws -> ClosedRange<Int>? {
        var low: Int?
        var high: Int?
        for source in sources {
            let database = try SQLiteDatabase(path: source.path, readOnly: true)
            try database.execute("PRAGMA trusted_schema = OFF")
            guard
                let row = try source.limited(
                    database, { try database.firstRow("SELECT min(zoom_level) AS low, max(zoom_level) AS high FROM tiles") }),
                let lowest = try row["low", as: Int?.self], let highest = try row["high", as: Int?.self]
            else { continue }
            low = min(low ?? lowest, lowest)
            high = max(high ?? highest, highest)
        }
        guard let low, let high else { return nil }
        return low...high
    }
}
