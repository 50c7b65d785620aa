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
        var invalid: (zoom: Int64, x: Int64, row: Int64)?
        let insert = "INSERT INTO placed (dest, z, x, y) VALUES (?, ?, ?, ?)"
        try database.execute("BEGIN")
        try tileset.database.forEachRow(
            "SELECT zoom_level AS z, tile_column AS x, tile_row AS y FROM tiles ORDER BY zoom_level, tile_column, tile_row"
        ) {
            row throws(SQLiteError) in
            pass.tiles += 1
            let zoom = try row["z", as: Int64.self]
            let x = try row["x", as: Int64.self]
            let tmsRow = try row["y", as: Int64.self]
            guard (0...30).contains(zoom), (0..<(Int64(1) << zoom)).contains(x), (0..<(Int64(1) << zoom)).contains(tmsRow) else {
                if invalid == nil { invalid = (zoom, x, tmsRow) }
                return
            }
            if column != (zoom, x) {
                column = (zoom, x)
                let strip = MercatorShape.Box.tile(zoom: Int(zoom), x: Int(x), y: 0)
                candidates = layout.shapes.indices.filter { index in
                    let box = layout.shapes[index].box
                    return box.minX <= strip.maxX && strip.minX <= box.maxX
                }
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
        try database.executeMany(insert, pending)
        try database.execute("COMMIT")
        if let invalid {
            throw ImportError.badTileset(
                file: tileset.name, reason: "tile zoom \(invalid.zoom) column \(invalid.x) row \(invalid.row) is outside the zoom's grid (zooms 0-30)"
            )
        }
        return pass
    }
}
