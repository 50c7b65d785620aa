import MapFormat
import MapIO

/// The first pass of an import: the tiles of the tileset in the columns near a region
/// (`ImportLayout.columns`), in index order (zoom, column, row), within this shard's run of that
/// order (`ImportShardPlan`), matched against the regions; the placements go to a scratch table
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
        /// The regions (positions) whose overviews got tiles, under `ImportOverview.destination(of:)`.
        var overviews: Set<Int> = []
    }

    /// Rows inserted per statement batch.
    private static let batch = 4096

    /// Refuses the tileset for its first bad row in index order (zoom, column, row): an address
    /// that is not three integers in its zoom's grid (zooms 0-30), a tile over
    /// `ImportTileset.maxTileBytes`, an address held twice. SQLite looks at every row of
    /// `positions` (every row without it): the shards of one import look at every row once between
    /// them, so one of them refuses what an unsharded import refuses.
    static func check(_ tileset: ImportTileset, positions: Range<Int>? = nil) throws {
        if let refused = try firstRefusal(in: tileset, positions: positions) { throw ImportError.badTileset(file: tileset.name, reason: refused) }
    }

    /// Places the tiles of `tileset` within `bounds` (a shard's run; every tile without it).
    static func run(tileset: ImportTileset, layout: ImportLayout, overview: ImportOverview?, bounds: ImportShardPlan.Bounds?, scratch: String) throws
        -> Pass
    {
        // `tileset` has passed `check`: every row's address is three integers in its grid, once.
        let placer = try Placer(layout: layout, overview: overview, scratch: scratch)
        let relation = tileset.layout.relation(in: "main")
        try tileset.limited(tileset.database) {
            guard let zooms = try ImportShardPlan.zoomRange(of: tileset) else { return }
            // A shard's run: from its first tile's address to the next run's first, exclusive.
            var within = ""
            var limits: [SQLValue] = []
            if let first = bounds?.first {
                within += " AND (zoom_level, tile_column, tile_row) >= (?, ?, ?)"
                limits += first
            }
            if let next = bounds?.next {
                within += " AND (zoom_level, tile_column, tile_row) < (?, ?, ?)"
                limits += next
            }
            for zoom in zooms where bounds?.holds(zoom: zoom) ?? true {
                let size = Int64(1) << zoom
                // Only the columns near a region, and in the run: the others' tiles are never decoded.
                for near in layout.columns(zoom: Int(zoom)) {
                    guard let span = bounds.map({ $0.columns(near, zoom: zoom) }) ?? near else { continue }
                    try tileset.database.forEachRow(
                        """
                        SELECT tile_column AS x, tile_row AS y FROM \(relation)
                        WHERE zoom_level = ? AND tile_column BETWEEN ? AND ?\(within) ORDER BY tile_column, tile_row
                        """, [.integer(zoom), .integer(span.lowerBound), .integer(span.upperBound)] + limits
                    ) {
                        row throws(SQLiteError) in
                        let x = try row["x", as: Int64.self]
                        let tmsRow = try row["y", as: Int64.self]
                        _ = try placer.place(zoom: Int(zoom), x: x, y: size - 1 - tmsRow)
                    }
                }
            }
        }
        return try placer.finish(tiles: tileset.count)
    }

    /// Places tiles one at a time, each tested as it comes (`place`): `run`'s rows, or the tiles of
    /// a PMTiles shard's run as its fill meets them (`ImportPMTiles.fill`), which then reads the
    /// bytes of only the tiles placed and tests no tile twice. The placements go to the scratch
    /// table `placed`; the destinations are numbered as they are first met, which changes no byte
    /// written (each destination's tiles are copied in address order).
    final class Placer {
        let layout: ImportLayout
        let overview: ImportOverview?
        private let database: SQLiteDatabase
        private(set) var pass = Pass()
        private var numbers: [[Int]: Int] = [:]
        private var pending: [[SQLValue]] = []
        /// The regions near each tile, by column (`run` reads only the columns near a region).
        private var candidates: ImportTileCandidates
        private static let insert = "INSERT INTO placed (dest, z, x, y) VALUES (?, ?, ?, ?)"

        /// Creates the scratch table at `scratch`, in an open transaction that `finish` commits.
        init(layout: ImportLayout, overview: ImportOverview?, scratch: String) throws {
            self.layout = layout
            self.overview = overview
            candidates = ImportTileCandidates(layout: layout, checksColumns: true)
            database = try TileDatabases.create(scratch)
            try database.execute(
                "CREATE TABLE placed (dest INTEGER NOT NULL, z INTEGER NOT NULL, x INTEGER NOT NULL, y INTEGER NOT NULL, PRIMARY KEY (dest, z, x, y)) WITHOUT ROWID"
            )
            try database.execute("BEGIN")
        }

        /// Places the tile at `zoom`, `x`, XYZ row `y` (each tile once): in the deepest regions whose
        /// polygons meet it, and in the overviews that hold it. `.bytes` when it is placed, `.skip` when
        /// it is not (no region near it, or it meets none).
        func place(zoom: Int, x: Int64, y: Int64) throws(SQLiteError) -> ImportPMTiles.Want {
            let (near, tile) = candidates.regions(zoom: zoom, x: x, y: y)
            guard !near.isEmpty else { return .skip }
            pass.examined += 1
            let hits = near.filter { layout.shapes[$0].intersects(tile) }
            guard !hits.isEmpty else {
                pass.outside += 1
                return .skip
            }
            let tmsRow = (Int64(1) << zoom) - 1 - y
            for region in overview?.holders(of: hits, zoom: Int64(zoom)) ?? [] {
                pass.overviews.insert(region)
                try add([.integer(Int64(ImportOverview.destination(of: region))), .integer(Int64(zoom)), .integer(x), .integer(tmsRow)])
            }
            let members = layout.deepest(hits)
            let number: Int
            if let known = numbers[members] {
                number = known
            } else {
                number = pass.destinations.count
                numbers[members] = number
                pass.destinations.append(members)
            }
            pass.placed += 1
            try add([.integer(Int64(number)), .integer(Int64(zoom)), .integer(x), .integer(tmsRow)])
            return .bytes
        }

        private func add(_ row: [SQLValue]) throws(SQLiteError) {
            pending.append(row)
            if pending.count >= ImportPlacement.batch {
                try database.executeMany(Self.insert, pending)
                pending.removeAll(keepingCapacity: true)
            }
        }

        /// Commits the placements and returns the pass over a tileset of `tiles` tiles.
        func finish(tiles: Int) throws -> Pass {
            try database.executeMany(Self.insert, pending)
            pending.removeAll()
            try database.execute("COMMIT")
            // The shapes answered every test so far (the shard plan's, the places', this pass's) from disk.
            try layout.checkShapes()
            pass.tiles = tiles
            return pass
        }
    }

    /// Why `check` refuses the tileset (a row that breaks a rule, before one held twice), or nil.
    private static func firstRefusal(in tileset: ImportTileset, positions: Range<Int>?) throws -> String? {
        let relation = tileset.layout.relation(in: "main")
        var checked = relation
        var arguments: [SQLValue] = []
        if let positions {
            // The run's rows by their place in the index order; `length` reads no tile's bytes.
            checked = """
                (SELECT zoom_level, tile_column, tile_row, length(tile_data) AS bytes FROM \(relation)
                ORDER BY zoom_level, tile_column, tile_row LIMIT ? OFFSET ?)
                """
            arguments = [.integer(Int64(positions.count)), .integer(Int64(positions.lowerBound))]
        }
        let length = positions == nil ? "length(tile_data)" : "bytes"
        let bad = try tileset.limited(tileset.database) {
            try tileset.database.firstRow(
                """
                SELECT zoom_level AS z, tile_column AS x, tile_row AS y, \(length) AS bytes FROM \(checked)
                WHERE NOT (typeof(zoom_level) = 'integer' AND typeof(tile_column) = 'integer' AND typeof(tile_row) = 'integer'
                    AND zoom_level BETWEEN 0 AND 30 AND tile_column >= 0 AND tile_column < (1 << zoom_level)
                    AND tile_row >= 0 AND tile_row < (1 << zoom_level))
                OR \(length) > ?
                ORDER BY zoom_level, tile_column, tile_row LIMIT 1
                """, arguments + [.integer(Int64(ImportTileset.maxTileBytes))])
        }
        if let row = bad {
            let address = (zoom: try row["z"], x: try row["x"], row: try row["y"])
            let named =
                "tiles row zoom_level \(describe(address.zoom)), tile_column \(describe(address.x)), tile_row \(describe(address.row))"
            guard case .integer(let zoom) = address.zoom, case .integer(let x) = address.x, case .integer(let tmsRow) = address.row else {
                return named + ": an address is three integers (MBTiles 1.3); fix or delete the row"
            }
            guard (0...30).contains(zoom), (0..<(Int64(1) << zoom)).contains(x), (0..<(Int64(1) << zoom)).contains(tmsRow) else {
                return "tile zoom \(zoom) column \(x) row \(tmsRow) is outside the zoom's grid (zooms 0-30)"
            }
            let bytes = try row["bytes", as: Int64?.self] ?? 0
            return named
                + ": its tile_data takes \(bytes) bytes, over the 8 MiB a tile may take; cut the tile smaller (tippecanoe: --maximum-tile-bytes)"
        }
        // The usual MBTiles indexes already make an address unique; only without them is it looked
        // for, over the whole table (two rows of one address may lie in two shards' runs).
        if try addressesAreUnique(tileset) { return nil }
        let twice = try tileset.limited(tileset.database) {
            try tileset.database.firstRow(
                """
                SELECT zoom_level AS z, tile_column AS x, tile_row AS y FROM \(relation)
                GROUP BY zoom_level, tile_column, tile_row HAVING count(*) > 1 ORDER BY zoom_level, tile_column, tile_row LIMIT 1
                """)
        }
        if let row = twice {
            return
                "tiles row zoom_level \(describe(try row["z"])), tile_column \(describe(try row["x"])), tile_row \(describe(try row["y"]))"
                + ": the tileset holds this address more than once; keep one row per tile (MBTiles' unique index on zoom_level, tile_column, tile_row)"
        }
        return nil
    }
}

extension ImportPlacement {
    /// Whether the tileset's unique indexes hold one row per address: a unique index on `tiles`
    /// over some of zoom_level, tile_column, tile_row; or for `map` and `images`, one such on `map`
    /// and one on `images` over some of tile_id (and zoom_level when the join takes it), so the join
    /// gives one tile per map row. Partial indexes and indexes on expressions do not count. (Rows
    /// with NULLs, which a unique index lets repeat, are refused first or never joined.)
    fileprivate static func addressesAreUnique(_ tileset: ImportTileset) throws -> Bool {
        func uniqueIndex(on table: String, within columns: Set<String>) throws -> Bool {
            let indexes = try tileset.database.query(
                "SELECT name FROM pragma_index_list(?) WHERE \"unique\" = 1 AND partial = 0", [.text(table)])
            for index in indexes {
                let keys = try tileset.database.query("SELECT name FROM pragma_index_info(?)", [.text(try index["name", as: String.self])])
                    .map { try $0["name", as: String?.self]?.lowercased() }
                if !keys.isEmpty, keys.allSatisfy({ $0.map(columns.contains) ?? false }) { return true }
            }
            return false
        }
        let address: Set<String> = ["zoom_level", "tile_column", "tile_row"]
        switch tileset.layout {
        case .table: return try uniqueIndex(on: "tiles", within: address)
        case .mapAndImages(let byZoom):
            return try uniqueIndex(on: "map", within: address)
                && uniqueIndex(on: "images", within: byZoom ? ["tile_id", "zoom_level"] : ["tile_id"])
        }
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
