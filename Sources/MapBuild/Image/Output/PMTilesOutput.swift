import Foundation
import MapFormat
import MapIO

/// The image's tiles as one PMTiles v3 archive, `<image>.pmtiles`, the single file static map
/// hosting serves with HTTP range requests: the same tiles as the `.mbtiles` output, the recipe's
/// regions' (see `TileDatabases`: the region first by id wins), clustered (tile data
/// in tile id order), identical tiles stored once (a run of consecutive ids with the same bytes is
/// one directory entry), directories and metadata gzipped. Vector tiles are stored gzipped (a zlib
/// or raw tile is re-wrapped), as tippecanoe writes them; other tiles as they are. The metadata has
/// `name`, `format`, `type`, `version`, `description` and, for vector tiles, the sources'
/// `vector_layers` merged; the header's bounds and centre are the regions' (`TilesetExtent`). Sources
/// of different formats are refused (`mixedTileFormats`).
///
/// Tiles never sit in memory together: they are gathered in a scratch SQLite database in the staging
/// folder, given their Hilbert tile ids, and read twice in id order, once to plan the data section
/// (offsets, dedup by SHA-256, directory entries, kept in the scratch database), once to write it
/// after the header and directories. The same image gives the same bytes.
struct PMTilesOutput: SingleFileOutput {
    static let fileExtension = ".pmtiles"

    var phase: BuildPhase? { .pmtiles }

    /// Rows inserted at once into the scratch database.
    private static let batch = 4096
    /// Tile bytes gathered before one write.
    private static let writeBuffer = 1 << 20
    /// Entries per leaf directory tried first when the root alone does not fit (doubled until the
    /// root of leaf entries fits).
    private static let firstLeafSize = 4096
    /// Test hook: entries per leaf directory, forcing leaf directories however few the tiles are.
    static let leafSizeVariable = "MAPPACK_PMTILES_LEAF_ENTRIES"

    func stage(_ source: ImageOutputSource) throws -> String {
        let name = publishedName(imageName: source.imageName)
        let regions = try source.regions()
        let scratch = source.stagingFolder + "/pmtiles-scratch"
        defer { try? FileSystem.removeTree(scratch) }
        let tiles = try source.tileDatabases(regions)
        let format = try tiles.commonFormat()
        let tileType = PMTiles.TileType(mbtilesFormat: format)
        let compression: PMTiles.Compression = tileType == .mvt ? .gzip : .none
        try FileSystem.makeDirectories(scratch)
        let work = try TileDatabases.create(scratch + "/tiles.db")
        try PMTilesOutput.gather(tiles, into: work)
        let plan = try PMTilesOutput.planTileData(work, compression: compression)
        guard plan.addressed > 0 else {
            throw BuildError.output(
                "pmtiles: image \(source.imageName) holds no tiles (no tile database among its regions' files); leave out the pmtiles output"
            )
        }
        let directories = try PMTilesOutput.directories(work, entries: plan.entries)

        let extent = TilesetExtent(
            regions: TilesetExtent.regions(regions, holdingTilesOf: tiles), minZoom: Int(plan.minZoom), maxZoom: Int(plan.maxZoom))
        var metadata: [String: Any] = [
            "name": source.imageName,
            "format": format ?? "application/octet-stream",
            "type": "baselayer",
            "version": source.mapVersion.rawValue,
            "description": "Tiles of \(source.imageName) (catalog \(source.catalog)), written by mappack",
        ]
        if tileType == .mvt {
            // PMTiles requires `vector_layers` for MVT tiles, even when no source lists any.
            let merged = try tiles.vectorLayersJSON().flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            metadata["vector_layers"] = merged?["vector_layers"] ?? [Any]()
        }
        let metadataBytes = try Zlib.gzip(try JSONSerialization.data(withJSONObject: metadata, options: [.sortedKeys, .withoutEscapingSlashes]))

        var header = PMTiles.Header()
        header.rootOffset = UInt64(PMTiles.headerLength)
        header.rootLength = UInt64(directories.root.count)
        header.metadataOffset = header.rootOffset + header.rootLength
        header.metadataLength = UInt64(metadataBytes.count)
        header.leafDirectoriesOffset = header.metadataOffset + header.metadataLength
        header.leafDirectoriesLength = directories.leavesLength
        header.tileDataOffset = header.leafDirectoriesOffset + header.leafDirectoriesLength
        header.tileDataLength = plan.length
        header.addressedTiles = plan.addressed
        header.tileEntries = plan.entries
        header.tileContents = plan.contents
        header.tileCompression = compression
        header.tileType = tileType
        header.minZoom = UInt8(plan.minZoom)
        header.maxZoom = UInt8(plan.maxZoom)
        header.bounds = extent.bounds
        header.centerZoom = UInt8(extent.centerZoom)
        header.center = extent.center

        let path = source.stagingFolder + "/" + name
        let file = try WritableFile(path: path)
        try file.write(header.bytes)
        try file.write(directories.root)
        try file.write(metadataBytes)
        if let leafSize = directories.leafSize {
            _ = try PMTilesOutput.leaves(work, size: leafSize) { leaf in try file.write(leaf) }
        }
        try PMTilesOutput.writeTileData(work, to: file, compression: compression, length: plan.length)
        try file.close(sync: source.sync)
        return name
    }

    /// Copies every tile of `tiles` into the scratch database (the first source holding a tile wins,
    /// as in the `.mbtiles`), then numbers each with its PMTiles tile id (`ids`).
    private static func gather(_ tiles: TileDatabases, into work: SQLiteDatabase) throws {
        try work.execute(
            """
            CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
            CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row);
            CREATE TABLE ids (tile_id INTEGER PRIMARY KEY, tile INTEGER NOT NULL);
            CREATE TABLE contents (digest TEXT PRIMARY KEY, offset INTEGER NOT NULL, length INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE entries (tile_id INTEGER PRIMARY KEY, offset INTEGER NOT NULL, length INTEGER NOT NULL,
              run_length INTEGER NOT NULL, fresh INTEGER NOT NULL);
            """)
        for tileSource in tiles.sources {
            try TileDatabases.attached(tileSource, to: work) {
                try work.execute(
                    """
                    INSERT OR IGNORE INTO tiles (zoom_level, tile_column, tile_row, tile_data)
                    SELECT zoom_level, tile_column, tile_row, tile_data FROM src.tiles ORDER BY zoom_level, tile_column, tile_row
                    """)
            }
        }
        var outside: String?
        try work.transaction {
            var pending: [[SQLValue]] = []
            let insert = "INSERT INTO ids (tile_id, tile) VALUES (?, ?)"
            try work.forEachRow("SELECT rowid AS tile, zoom_level, tile_column, tile_row FROM tiles ORDER BY rowid") { row throws(SQLiteError) in
                guard outside == nil else { return }
                let z = try row["zoom_level", as: Int64.self]
                let x = try row["tile_column", as: Int64.self]
                let tmsRow = try row["tile_row", as: Int64.self]
                guard (0...Int64(PMTiles.maxZoom)).contains(z), let id = PMTiles.tileID(z: Int(z), x: x, y: (Int64(1) << z) - 1 - tmsRow) else {
                    outside = "\(z)/\(x)/\(tmsRow)"
                    return
                }
                pending.append([.integer(Int64(id)), .integer(try row["tile", as: Int64.self])])
                if pending.count >= batch {
                    try work.executeMany(insert, pending)
                    pending.removeAll(keepingCapacity: true)
                }
            }
            try work.executeMany(insert, pending)
        }
        if let outside {
            throw BuildError.output(
                "pmtiles: tile \(outside) (zoom/column/TMS row) of the image's tile databases lies outside its zoom's grid or above zoom \(PMTiles.maxZoom); "
                    + "fix the tile database or leave out the pmtiles output")
        }
    }

    /// What the first read of the tiles found: counts, the data section's length, the zooms.
    private struct DataPlan {
        var addressed: UInt64 = 0
        var entries: UInt64 = 0
        var contents: UInt64 = 0
        var length: UInt64 = 0
        var minZoom = Int64.max
        var maxZoom = Int64.min
    }

    /// The tiles in id order, as the data section will hold them: each new content gets the next
    /// offset, a content seen before (same SHA-256) its first offset, and consecutive ids with the
    /// same content one entry. Entries go to the scratch database's `entries` (`fresh` when their
    /// bytes are written at their offset); empty tiles address nothing and are left out.
    private static func planTileData(_ work: SQLiteDatabase, compression: PMTiles.Compression) throws -> DataPlan {
        var plan = DataPlan()
        var run: (entry: PMTiles.Entry, digest: SHA256Digest, fresh: Bool)?
        var pending: [[SQLValue]] = []
        var failure: (any Error)?
        let hasher = SHA256()
        let insert = "INSERT INTO entries (tile_id, offset, length, run_length, fresh) VALUES (?, ?, ?, ?, ?)"
        func finishRun() throws(SQLiteError) {
            guard let (entry, fresh) = run.map({ ($0.entry, $0.fresh) }) else { return }
            pending.append([
                .integer(Int64(entry.tileID)), .integer(Int64(entry.offset)), .integer(Int64(entry.length)), .integer(Int64(entry.runLength)),
                .integer(fresh ? 1 : 0),
            ])
            plan.entries += 1
            if pending.count >= batch {
                try work.executeMany(insert, pending)
                pending.removeAll(keepingCapacity: true)
            }
        }
        try work.transaction {
            let sql = "SELECT i.tile_id, t.zoom_level, t.tile_data FROM ids i JOIN tiles t ON t.rowid = i.tile ORDER BY i.tile_id"
            try work.forEachRow(sql) { row throws(SQLiteError) in
                guard failure == nil else { return }
                let id = UInt64(try row["tile_id", as: Int64.self])
                let zoom = try row["zoom_level", as: Int64.self]
                let data = try row["tile_data", as: Data?.self] ?? Data()
                guard !data.isEmpty else { return }
                let bytes: Data
                do { bytes = try stored(data, compression: compression) } catch {
                    failure = BuildError.output(
                        "pmtiles: the zoom \(zoom) tile with PMTiles id \(id) cannot be stored gzipped (\(error)); fix that tile in its tile database"
                    )
                    return
                }
                hasher.update(bytes)
                let digest = hasher.finalize()
                hasher.reset()
                plan.addressed += 1
                plan.minZoom = min(plan.minZoom, zoom)
                plan.maxZoom = max(plan.maxZoom, zoom)
                if let current = run, current.digest == digest, current.entry.tileID + current.entry.runLength == id {
                    run?.entry.runLength += 1
                    return
                }
                try finishRun()
                let key = SQLValue.text(digest.hex)
                if let known = try work.firstRow("SELECT offset, length FROM contents WHERE digest = ?", [key]) {
                    let entry = PMTiles.Entry(
                        tileID: id, offset: UInt64(try known["offset", as: Int64.self]), length: UInt64(try known["length", as: Int64.self]),
                        runLength: 1)
                    run = (entry, digest, false)
                } else {
                    try work.query(
                        "INSERT INTO contents (digest, offset, length) VALUES (?, ?, ?)",
                        [key, .integer(Int64(plan.length)), .integer(Int64(bytes.count))])
                    run = (PMTiles.Entry(tileID: id, offset: plan.length, length: UInt64(bytes.count), runLength: 1), digest, true)
                    plan.length += UInt64(bytes.count)
                    plan.contents += 1
                }
            }
            if let failure { throw failure }
            try finishRun()
            try work.executeMany(insert, pending)
        }
        return plan
    }

    /// A tile's bytes as the archive stores them: for gzip, a gzip stream kept, a zlib stream
    /// inflated and gzipped, anything else gzipped; otherwise the bytes as they are.
    static func stored(_ data: Data, compression: PMTiles.Compression) throws -> Data {
        guard compression == .gzip else { return data }
        switch Zlib.wrapping(of: data) {
        case .gzip: return data
        case .zlib: return try Zlib.gzip(try Zlib.inflate(data, limit: MapLibreOfflineOutput.maxTileBytes))
        case .none: return try Zlib.gzip(data)
        }
    }

    /// The gzipped root directory and, when it holds leaf entries, the leaves' size and total length.
    private struct Directories {
        let root: Data
        let leafSize: Int?
        let leavesLength: UInt64
    }

    /// The root directory of every entry when it fits the first 16 KiB, else of leaf directories of
    /// `firstLeafSize` entries, doubled until the root fits (`MAPPACK_PMTILES_LEAF_ENTRIES` forces a size).
    private static func directories(_ work: SQLiteDatabase, entries: UInt64) throws -> Directories {
        let forced = ProcessInfo.processInfo.environment[leafSizeVariable].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil }
        if forced == nil, entries <= UInt64(4 * firstLeafSize) {
            let root = try Zlib.gzip(PMTiles.directory(try PMTilesOutput.entries(work, from: 0, limit: Int(entries))))
            if root.count <= PMTiles.maxRootLength { return Directories(root: root, leafSize: nil, leavesLength: 0) }
        }
        var leafSize = forced ?? firstLeafSize
        while true {
            let (rootEntries, length) = try leaves(work, size: leafSize) { _ in }
            let root = try Zlib.gzip(PMTiles.directory(rootEntries))
            if root.count <= PMTiles.maxRootLength { return Directories(root: root, leafSize: leafSize, leavesLength: length) }
            leafSize *= 2
        }
    }

    /// Cuts the entries, in id order, into gzipped leaf directories of `size` entries, handing each to
    /// `write`; returns the root's entries for them and the leaves' total length.
    private static func leaves(
        _ work: SQLiteDatabase, size: Int, write: (Data) throws -> Void
    ) throws -> (root: [PMTiles.Entry], length: UInt64) {
        var root: [PMTiles.Entry] = []
        var offset: UInt64 = 0
        var next: UInt64 = 0
        while true {
            let chunk = try entries(work, from: next, limit: size)
            guard let first = chunk.first, let last = chunk.last else { break }
            let leaf = try Zlib.gzip(PMTiles.directory(chunk))
            try write(leaf)
            root.append(PMTiles.Entry(tileID: first.tileID, offset: offset, length: UInt64(leaf.count), runLength: 0))
            offset += UInt64(leaf.count)
            next = last.tileID + 1
            if chunk.count < size { break }
        }
        return (root, offset)
    }

    /// Up to `limit` entries from tile id `from` on, in id order.
    private static func entries(_ work: SQLiteDatabase, from: UInt64, limit: Int) throws -> [PMTiles.Entry] {
        try work.query(
            "SELECT tile_id, offset, length, run_length FROM entries WHERE tile_id >= ? ORDER BY tile_id LIMIT ?",
            [.integer(Int64(from)), .integer(Int64(limit))]
        ).map {
            PMTiles.Entry(
                tileID: UInt64(try $0["tile_id", as: Int64.self]), offset: UInt64(try $0["offset", as: Int64.self]),
                length: UInt64(try $0["length", as: Int64.self]), runLength: UInt64(try $0["run_length", as: Int64.self]))
        }
    }

    /// Writes the data section: each fresh entry's tile, in id order, which is offset order.
    private static func writeTileData(_ work: SQLiteDatabase, to file: WritableFile, compression: PMTiles.Compression, length: UInt64) throws {
        var buffer = Data()
        buffer.reserveCapacity(writeBuffer)
        var written: UInt64 = 0
        var failure: (any Error)?
        let sql = """
            SELECT e.tile_id, e.offset, t.tile_data FROM entries e JOIN ids i ON i.tile_id = e.tile_id JOIN tiles t ON t.rowid = i.tile
            WHERE e.fresh = 1 ORDER BY e.tile_id
            """
        try work.forEachRow(sql) { row throws(SQLiteError) in
            guard failure == nil else { return }
            do {
                let bytes = try stored(try row["tile_data", as: Data?.self] ?? Data(), compression: compression)
                guard UInt64(try row["offset", as: Int64.self]) == written else {
                    throw BuildError.output("pmtiles: tile id \(try row["tile_id", as: Int64.self]) is not where its plan put it (a bug; report it)")
                }
                buffer.append(bytes)
                written += UInt64(bytes.count)
                if buffer.count >= writeBuffer {
                    try file.write(buffer)
                    buffer.removeAll(keepingCapacity: true)
                }
            } catch { failure = error }
        }
        if let failure { throw failure }
        try file.write(buffer)
        guard written == length else {
            throw BuildError.output("pmtiles: wrote \(written) bytes of tile data where the header says \(length) (a bug; report it)")
        }
    }
}
