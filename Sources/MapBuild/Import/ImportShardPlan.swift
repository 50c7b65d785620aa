import MapFormat
import MapIO

/// What shard I of `--shard I/N` takes: its share of the tileset's tile order, and the regions whose
/// places it writes.
///
/// The tiles are cut into N contiguous runs of the tileset's own order: for an MBTiles tileset the
/// index order (zoom, column, row), balanced by tile count at the positions `share` gives; for a
/// PMTiles archive the tile-id order, balanced by tile count (`tileWeight`) and by the bytes of the
/// tiles (the rest: the directories give them for free, a shard fetches them, and a low zoom's tile,
/// a continent each, is several times a deep zoom's), cut at the ids its directory walk finds
/// (`ImportPMTiles.fill(_:wanted:totals:shares:)`).
/// A shard places only the tiles of its run, against every region, and writes for each bundle the
/// piece its tiles make; a region whose tiles span several runs (a large country) is split across
/// shards, and `import --merge` joins its pieces into the bytes an unsharded import writes
/// (`ImportDatabases.joinPieces`). The cut needs nothing but the tile index or the directories,
/// so every shard finds the same one without reading the tiles or the regions first.
///
/// A region's `search.db` is written whole by one shard (`searchShards`), so each shard keeps only
/// the places of its regions.
enum ImportShardPlan {
    /// How much of a PMTiles tile's weight in the cut is its count (the rest is its bytes). Cut half
    /// and half, Europe's first shard of 4 (zooms 0-7, 10 % of the tiles) fetched 0.41 of the archive.
    static let tileWeight = 0.2

    /// The positions (0-based, in the tileset's order) of shard `shard` (0-based) of `shards`, of
    /// `tiles` tiles: the runs of all shards cover every position once, and differ in length by one
    /// at most.
    static func share(shard: Int, of shards: Int, tiles: Int) -> Range<Int> {
        let lower = Int((Int64(tiles) * Int64(shard)) / Int64(shards))
        let upper = Int((Int64(tiles) * Int64(shard + 1)) / Int64(shards))
        return lower..<upper
    }

    /// The shard (0-based) that writes each region's `search.db`: the regions in id order dealt in
    /// turn, the same in every shard.
    static func searchShards(ids: [RegionID], shards: Int) -> [Int] {
        var shardOf = [Int](repeating: 0, count: ids.count)
        for (turn, region) in ids.indices.sorted(by: { ids[$0] < ids[$1] }).enumerated() { shardOf[region] = turn % max(1, shards) }
        return shardOf
    }

    /// The addresses that bound a run of an MBTiles tileset: the first of its tiles and the first of
    /// the next run's (nil at either end of the order). Each a zoom, column and TMS row as the
    /// tileset holds them.
    struct Bounds {
        var first: [SQLValue]?
        var next: [SQLValue]?

        /// Whether `zoom` can hold a tile of the run (for bounds that are integers).
        func holds(zoom: Int64) -> Bool {
            if case .integer(let low) = first?[0], zoom < low { return false }
            if case .integer(let high) = next?[0], zoom > high { return false }
            return true
        }

        /// `span` (columns of `zoom`) cut to the run's columns, nil when none is left.
        func columns(_ span: ClosedRange<Int64>, zoom: Int64) -> ClosedRange<Int64>? {
            var low = span.lowerBound
            var high = span.upperBound
            if case .integer(let z) = first?[0], z == zoom, case .integer(let x) = first?[1] { low = max(low, x) }
            if case .integer(let z) = next?[0], z == zoom, case .integer(let x) = next?[1] { high = min(high, x) }
            return low <= high ? low...high : nil
        }
    }

    /// The bounds of the run at `positions` of `tileset` (which has passed its row check for them):
    /// two steps along its index.
    static func bounds(of positions: Range<Int>, in tileset: ImportTileset) throws -> Bounds {
        let relation = tileset.layout.relation(in: "main")
        func address(at position: Int) throws -> [SQLValue]? {
            guard position < tileset.count else { return nil }
            return try tileset.limited(tileset.database) {
                try tileset.database.firstRow(
                    """
                    SELECT zoom_level AS z, tile_column AS x, tile_row AS y FROM \(relation)
                    ORDER BY zoom_level, tile_column, tile_row LIMIT 1 OFFSET ?
                    """, [.integer(Int64(position))]
                ).map { [try $0["z"], try $0["x"], try $0["y"]] }
            }
        }
        return Bounds(first: positions.lowerBound == 0 ? nil : try address(at: positions.lowerBound), next: try address(at: positions.upperBound))
    }

    /// Whether a shard may take a tile of the square at `zoom`, `x`, XYZ row `y` of its run of a
    /// PMTiles archive, asking what the placement asks (`ImportPlacement.Placer`): nothing when no
    /// region's box is near it; `.bytes` when a region's polygon meets it; else `.address`. The fill
    /// asks it for the squares of tiles a leaf or a run holds (`mayWant`), anything but `.skip`
    /// meaning some tile of it may be taken; each tile of the run itself is asked of the placer.
    static func reads(layout: ImportLayout) -> (Int, Int64, Int64) -> ImportPMTiles.Want {
        var candidates = ImportTileCandidates(layout: layout, checksColumns: false)
        return { zoom, x, y in
            let (near, tile) = candidates.regions(zoom: zoom, x: x, y: y)
            guard !near.isEmpty else { return .skip }
            return near.contains(where: { layout.shapes[$0].intersects(tile) }) ? .bytes : .address
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
}
