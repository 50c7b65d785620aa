import MapFormat
import MapIO

/// Which shard of `--shard I/N` writes each region's bundles, balanced by the tiles they place.
///
/// A tile goes to the shard of the first region (by id) of its destination (`ImportLayout.owner`),
/// so a region's load is the tiles whose destination it heads. Every shard estimates the loads the
/// same way from the same inputs, without reading what the others place: it places the tiles of one
/// sample zoom, the lowest that holds at least `sampleTiles` tiles (else the highest), exactly as
/// the import does, and counts them per heading region; deeper zooms split each of those tiles into
/// four, so the sample's shares are the import's. The regions are then dealt largest first, ties by
/// id, each to the shard with the fewest tiles so far (then the fewest regions, then the lowest
/// number): the same assignment in every shard, and one region's tiles never split. A parent that
/// heads no tiles follows its heaviest child (`deal`).
enum ImportShardPlan {
    /// Tiles the sample zoom holds at least, unless no zoom does: enough that a region of a few
    /// tiles' width at the deepest zoom still weighs something, few enough to place at once.
    static let sampleTiles = 4096

    /// The shard (0-based) of each region of `layout`, for `shards` shards; `tileset` has passed
    /// `ImportPlacement.check`.
    static func assign(tileset: ImportTileset, layout: ImportLayout, shards: Int) throws -> [Int] {
        guard shards > 1 else { return [Int](repeating: 0, count: layout.regions.count) }
        var loads = [Int](repeating: 0, count: layout.regions.count)
        if let zoom = try sampleZoom(of: tileset) {
            loads = try tileset.limited(tileset.database) {
                try estimate(
                    database: tileset.database, relation: tileset.layout.relation(in: "main"), bytes: "length(tile_data)", zoom: zoom, layout: layout)
            }
        }
        return assign(loads: loads, layout: layout, shards: shards)
    }

    /// The shard (0-based) of each region of `layout` with the loads `estimate` gave.
    static func assign(loads: [Int], layout: ImportLayout, shards: Int) -> [Int] {
        guard shards > 1 else { return [Int](repeating: 0, count: layout.regions.count) }
        let ids = layout.regions.map(\.id)
        let position = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($0.element, $0.offset) })
        return deal(loads: loads, ids: ids, parents: layout.regions.map { $0.parent.flatMap { position[$0] } }, shards: shards)
    }

    /// Each region's load at the sample zoom `zoom`: the tiles whose destination it heads, plus
    /// their bytes counted in tiles of the sample's mean size (a region of coasts and fjords weighs
    /// more than one of the same tiles over plain land: a shard fetches and writes bytes too). From
    /// the addresses `relation` of `database` holds (`zoom_level`, `tile_column`, `tile_row`, and
    /// each tile's length as `bytes`: the tileset's, or the sample a PMTiles archive's survey wrote).
    static func estimate(database: SQLiteDatabase, relation: String, bytes: String, zoom: Int64, layout: ImportLayout) throws -> [Int] {
        var tiles = [Int](repeating: 0, count: layout.regions.count)
        var tileBytes = [Int](repeating: 0, count: layout.regions.count)
        var column: Int64 = -1
        var candidates: [Int] = []
        var sampled = 0
        var sampledBytes = 0
        try database.forEachRow(
            "SELECT tile_column AS x, tile_row AS y, \(bytes) AS bytes FROM \(relation) WHERE zoom_level = ? ORDER BY tile_column, tile_row",
            [.integer(zoom)]
        ) { row throws(SQLiteError) in
            // Every row is three integers in its zoom's grid (`ImportPlacement.check`, or the archive's walk).
            let x = try row["x", as: Int64.self]
            let tmsRow = try row["y", as: Int64.self]
            let length = Int(try row["bytes", as: Int64?.self] ?? 0)
            sampled += 1
            sampledBytes += length
            if x != column {
                column = x
                candidates = layout.candidates(zoom: Int(zoom), x: Int(x))
            }
            let tile = MercatorShape.Box.tile(zoom: Int(zoom), x: Int(x), y: Int((Int64(1) << zoom) - 1 - tmsRow))
            let hits = candidates.filter { layout.shapes[$0].box.overlaps(tile) && layout.shapes[$0].intersects(tile) }
            guard !hits.isEmpty else { return }
            let head = layout.deepest(hits)[0]
            tiles[head] += 1
            tileBytes[head] += length
        }
        guard sampledBytes > 0 else { return tiles }
        let perTile = Double(sampled) / Double(sampledBytes)
        return tiles.indices.map { tiles[$0] + Int((Double(tileBytes[$0]) * perTile).rounded()) }
    }

    /// What shard `shard` takes of the tile at `zoom`, `x`, XYZ row `y` of a PMTiles archive, asking
    /// what the placement asks (`ImportPlacement.run`): nothing when none of its regions' boxes is
    /// near the tile; the tile's bytes when the shard writes it (the first of the deepest regions
    /// whose polygons meet it is the shard's, or an overview of the shard's holds it); else its
    /// address alone, which the placement looks at and counts but never copies. So a shard that
    /// reads these places and counts what it would reading every tile, and fetches the bytes of the
    /// tiles it writes only: a border tile, which several shards' regions meet, is fetched by the
    /// one shard that writes it. For a square of several tiles (a tile of a lower zoom), anything but
    /// `.skip` means some tile of it may be taken.
    static func reads(shard: Int, layout: ImportLayout, overview: ImportOverview?) -> (Int, Int64, Int64) -> ImportPMTiles.Want {
        // Tiles come in Hilbert order, so columns recur: each column's candidates are found once.
        var columns: [Int64: [Int]] = [:]
        return { zoom, x, y in
            let key = Int64(zoom) << 40 | x
            let candidates: [Int]
            if let known = columns[key] {
                candidates = known
            } else {
                if columns.count >= 1 << 16 { columns.removeAll(keepingCapacity: true) }
                candidates = layout.candidates(zoom: zoom, x: Int(x))
                columns[key] = candidates
            }
            let tile = MercatorShape.Box.tile(zoom: zoom, x: Int(x), y: Int(y))
            let near = candidates.filter { layout.shapes[$0].box.minY <= tile.maxY && tile.minY <= layout.shapes[$0].box.maxY }
            guard near.contains(where: { layout.shardOfRegion[$0] == shard }) else { return .skip }
            let hits = near.filter { layout.shapes[$0].intersects(tile) }
            guard !hits.isEmpty else { return .address }
            if layout.owner(of: layout.deepest(hits)) == shard { return .bytes }
            if let overview, !overview.holders(of: hits, zoom: Int64(zoom), layout: layout, shard: shard).isEmpty { return .bytes }
            return .address
        }
    }

    /// The lowest zoom of the tileset with at least `sampleTiles` tiles, else its highest; nil when
    /// it has no tiles. Each zoom is counted on the index, stopping at the first that is enough.
    static func sampleZoom(of tileset: ImportTileset) throws -> Int64? {
        let relation = tileset.layout.relation(in: "main")
        return try tileset.limited(tileset.database) { () throws -> Int64? in
            guard let zooms = try zoomRange(of: tileset) else { return nil }
            for zoom in zooms {
                let count =
                    try tileset.database.firstRow(
                        "SELECT count(*) AS n FROM (SELECT 1 FROM \(relation) WHERE zoom_level = ? LIMIT ?)",
                        [.integer(zoom), .integer(Int64(sampleTiles))])?["n", as: Int64.self] ?? 0
                if count >= Int64(sampleTiles) { return zoom }
            }
            return zooms.upperBound
        }
    }

    /// The lowest and highest zoom of the tileset's tiles, nil when it has none: two index look-ups.
    /// For a tileset `ImportPlacement.check` passed, under its work limit.
    static func zoomRange(of tileset: ImportTileset) throws -> ClosedRange<Int64>? {
        let relation = tileset.layout.relation(in: "main")
        let range = try tileset.database.firstRow(
            """
            SELECT (SELECT zoom_level FROM \(relation) ORDER BY zoom_level LIMIT 1) AS low,
                (SELECT zoom_level FROM \(relation) ORDER BY zoom_level DESC LIMIT 1) AS high
            """)
        guard let low = try range?["low", as: Int64?.self], let high = try range?["high", as: Int64?.self] else { return nil }
        return low...high
    }

    /// Regions dealt largest load first (ties by id), each to the shard with the least load so far,
    /// then the fewest regions, then the lowest number. A region that heads no tiles but has children
    /// (a continent whose countries cover it) goes with its heaviest child instead: its box holds
    /// theirs, so whichever shard has it reads every column under it, and the heaviest child's shard
    /// reads most of those already. `parents` holds each region's parent (a position).
    static func deal(loads: [Int], ids: [RegionID], parents: [Int?], shards: Int) -> [Int] {
        var subtree = loads
        var depth = [Int](repeating: 0, count: loads.count)
        for region in loads.indices {
            // At most one step a region: parents form no cycle, and this holds even if they did.
            var step = parents[region]
            var steps = 0
            while let parent = step, steps < loads.count {
                subtree[parent] += loads[region]
                depth[region] += 1
                step = parents[parent]
                steps += 1
            }
        }
        var children = [[Int]](repeating: [], count: loads.count)
        for region in loads.indices { if let parent = parents[region] { children[parent].append(region) } }
        let followers = Set(loads.indices.filter { loads[$0] == 0 && !children[$0].isEmpty })
        let order = loads.indices.filter { !followers.contains($0) }.sorted {
            loads[$0] != loads[$1] ? loads[$0] > loads[$1] : ids[$0] < ids[$1]
        }
        var shardLoads = [(tiles: Int, regions: Int)](repeating: (0, 0), count: shards)
        var shardOf = [Int](repeating: 0, count: loads.count)
        for region in order {
            let lightest = shardLoads.indices.min {
                (shardLoads[$0].tiles, shardLoads[$0].regions, $0) < (shardLoads[$1].tiles, shardLoads[$1].regions, $1)
            }!
            shardOf[region] = lightest
            shardLoads[lightest].tiles += loads[region]
            shardLoads[lightest].regions += 1
        }
        // Deepest first, so a follower's children have their shards.
        for region in followers.sorted(by: { depth[$0] != depth[$1] ? depth[$0] > depth[$1] : ids[$0] < ids[$1] }) {
            let heaviest = children[region].min { subtree[$0] != subtree[$1] ? subtree[$0] > subtree[$1] : ids[$0] < ids[$1] }!
            shardOf[region] = shardOf[heaviest]
        }
        return shardOf
    }
}
