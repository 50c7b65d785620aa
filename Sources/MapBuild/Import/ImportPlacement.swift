import MapFormat
import MapIO

/// The first pass of an import: every tile of the tileset, in index order (zoom, column, row),
/// matched against the regions; the placements of this shard's tiles go to a scratch table
/// `placed(dest, z, x, y)` on disk, so memory holds one column's candidates and the list of
/// destinations (each a set of regions), never the tiles.
enum ImportPlacement {
    /// What the pass found.
    struct Pass {
        /// Each destination: the deepest regions (positions, sorted by id) that need its tiles.
        var destinations: [[Int]] = []
        var tiles = 0
        var examined = 0
        var placed = 0
        var outside = 0
    }

    /// Rows inserted per statement batch.
    private static let batch = 4096

    static func run(tileset: ImportTileset, layout: ImportLayout, shard: Int, scratch: String) throws -> Pass {
        let database = try TileDatabases.create(scratch)
        try database.execute(
            "CREATE TABLE placed (dest INTEGER NOT NULL, z INTEGER NOT NULL, x INTEGER NOT NULL, y INTEGER NOT NULL, PRIMARY KEY (dest, z, x, y)) WITHOUT ROWID"
        )
        var pass = Pass()
        var numbers: [[Int]: Int] = [:]
        var pending: [[SQLValue]] = []
        var column: (zoom: Int64, x: Int64) = (-1, -1)
        var candidates: [Int] = []
        // The first row that is refused; the rows after it are passed over (the reader's callback
        // cannot throw the import's error).
        var refused: String?
        var previous: (zoom: Int64, x: Int64, row: Int64)?
        let insert = "INSERT INTO placed (dest, z, x, y) VALUES (?, ?, ?, ?)"
        try database.execute("BEGIN")
        try tileset.limited(tileset.database) {
            try tileset.database.forEachRow(
                """
                SELECT zoom_level AS z, tile_column AS x, tile_row AS y, length(tile_data) AS bytes FROM \(tileset.layout.relation(in: "main"))
                ORDER BY zoom_level, tile_column, tile_row
                """
            ) {
                row throws(SQLiteError) in
                guard refused == nil else { return }
                pass.tiles += 1
                let address = (zoom: try row["z"], x: try row["x"], row: try row["y"])
                func named() -> String {
                    "tiles row zoom_level \(describe(address.zoom)), tile_column \(describe(address.x)), tile_row \(describe(address.row))"
                }
                guard case .integer(let zoom) = address.zoom, case .integer(let x) = address.x, case .integer(let tmsRow) = address.row else {
                    refused = named() + ": an address is three integers (MBTiles 1.3); fix or delete the row"
                    return
                }
                guard (0...30).contains(zoom), (0..<(Int64(1) << zoom)).contains(x), (0..<(Int64(1) << zoom)).contains(tmsRow) else {
                    refused = "tile zoom \(zoom) column \(x) row \(tmsRow) is outside the zoom's grid (zooms 0-30)"
                    return
                }
                if let previous, previous == (zoom, x, tmsRow) {
                    refused =
                        named()
                        + ": the tileset holds this address more than once; keep one row per tile (MBTiles' unique index on zoom_level, tile_column, tile_row)"
                    return
                }
                previous = (zoom, x, tmsRow)
                if let bytes = try row["bytes", as: Int64?.self], bytes > Int64(ImportTileset.maxTileBytes) {
                    refused =
                        named()
                        + ": its tile_data takes \(bytes) bytes, over the 8 MiB a tile may take; cut the tile smaller (tippecanoe: --maximum-tile-bytes)"
                    return
                }
                if column != (zoom, x) {
                    column = (zoom, x)
                    candidates = layout.candidates(zoom: Int(zoom), x: Int(x))
                }
                let tile = MercatorShape.Box.tile(zoom: Int(zoom), x: Int(x), y: Int((Int64(1) << zoom) - 1 - tmsRow))
                let near = candidates.filter { layout.shapes[$0].box.minY <= tile.maxY && tile.minY <= layout.shapes[$0].box.maxY }
                // Another shard writes every destination whose regions this shard does not own.
                guard near.contains(where: { layout.shardOfRegion[$0] == shard }) else { return }
                pass.examined += 1
                let hits = near.filter { layout.shapes[$0].intersects(tile) }
                guard !hits.isEmpty else {
                    // Counted once over all shards: by the shard of the first region near it.
                    if layout.owner(of: layout.deepest(near)) == shard { pass.outside += 1 }
                    return
                }
                let members = layout.deepest(hits)
                guard layout.owner(of: members) == shard else { return }
                let number: Int
                if let known = numbers[members] {
                    number = known
                } else {
                    number = pass.destinations.count
                    numbers[members] = number
                    pass.destinations.append(members)
                }
                pass.placed += 1
                pending.append([.integer(Int64(number)), .integer(zoom), .integer(x), .integer(tmsRow)])
                if pending.count >= batch {
                    try database.executeMany(insert, pending)
                    pending.removeAll(keepingCapacity: true)
                }
            }
        }
        try database.executeMany(insert, pending)
        try database.execute("COMMIT")
        if let refused { throw ImportError.badTileset(file: tileset.name, reason: refused) }
        return pass
    }
}

/// A tileset value as an error shows it: a number, NULL, or quoted text (cut short).
private func describe(_ value: SQLValue) -> String {
    switch value {
    case .integer(let number): "\(number)"
    case .real(let number): "\(number)"
    case .text(let text): "'\(text.prefix(40))'"
    case .blob(let bytes): "a blob of \(bytes.count) bytes"
    case .null: "NULL"
    }
}
