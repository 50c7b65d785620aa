import Foundation
import MapFormat
import MapIO

/// A PMTiles v3 `--tiles` archive (the `PMTiles` magic with version 3, or a `.pmtiles` name), a
/// file or an `http(s)://` URL read by range (`RangedArchive`), turned into a scratch MBTiles 1.3
/// file in the import's staging folder, which the import then reads as it reads any MBTiles and
/// deletes at the end.
///
/// It streams: directories are read one at a time (the root, then each leaf where the walk reaches
/// it, at most three leaves deep), each inflated within `maxDirectoryBytes`; the tile entries a run
/// wants are gathered up to `spanBytes`, their bytes read as few large spans (`TileSpans`: adjacent
/// runs, and runs whose gaps are small beside them, in one read or one range request), and rows go to SQLite
/// in bounded batches. A run (one entry for consecutive tile ids with the same bytes) becomes one
/// row per tile, as MBTiles has no runs. Tiles are stored as the archive holds them (gzipped vector
/// tiles stay gzipped).
///
/// A shard (`--shard I/N`) walks every directory once (`survey`: the tiles and their bytes
/// counted, and the counts after each leaf of the root kept), then only the leaves of its run
/// (`fill(_:wanted:totals:shares:)`): it finds the tile ids where its share of the tile-id order and
/// the next begin as it goes (each tile weighed by count and by its bytes), takes the bytes of the
/// tiles of its run that meet a region, and passes over the other runs' leaves with the counts the
/// survey kept. So N shards read the directories about twice each but the tile data, the bulk of
/// an archive, about once together.
///
/// Everything the walk reads is checked against the file first, so a damaged or hostile archive
/// is refused as bad input naming the file (`ImportError.badPMTiles`), never read past its end.
struct ImportPMTiles {
    /// The `--tiles` path or URL, as given.
    let path: String
    let source: Source
    let size: UInt64
    let header: PMTiles.Header

    /// Where the archive's bytes come from.
    enum Source {
        case file(ReadableFile)
        case ranged(RangedArchive)
    }

    /// What a walk over every directory found.
    struct Survey {
        /// Tiles the archive addresses (a run's once per tile).
        var tiles = 0
        /// The lowest and highest zoom with tiles; nil when there are none.
        var zooms: ClosedRange<Int>?
        /// Tile bytes the archive holds, each blob once (an entry's bytes count when they lie past
        /// every earlier entry's: a tile repeated later, or a run, points back to bytes counted).
        var bytes: UInt64 = 0
        /// The first tile id at or past each share a shard's `fill` was asked for, `UInt64.max` past
        /// the last tile (`Walk.shares`).
        var cuts: [UInt64] = []
        /// The walk's counts after each leaf the root points to, in order: what a shard's `fill`
        /// takes for a leaf outside its run without reading it again. One per root entry at most,
        /// so no more than the root itself holds.
        var marks: [Mark] = []

        /// Tiles and tile bytes counted, and the end of the furthest tile bytes, after a leaf.
        struct Mark {
            var tiles: Int
            var bytes: UInt64
            var highWater: UInt64
        }
    }

    /// What a shard takes of one tile (`fill(_:wanted:)`).
    enum Want {
        /// Nothing: no region is near it.
        case skip
        /// Its address, with no bytes: near a region's box, but it meets no polygon, so the placement
        /// looks at it (outside every region) and never copies it.
        case address
        /// Its address and bytes.
        case bytes
    }

    /// The most bytes a directory (root or leaf) may inflate to, or take compressed: a leaf of a
    /// million entries is a few MiB.
    static let maxDirectoryBytes = 64 << 20
    /// The most bytes the JSON metadata may inflate to, or take compressed.
    static let maxMetadataBytes = 64 << 20
    /// The longest tile accepted: an MBTiles tileset's bound (`ImportTileset.maxTileBytes`).
    static let maxTileBytes = ImportTileset.maxTileBytes
    /// Leaf directories below the root; the spec's writers need at most 3.
    static let maxLeafDepth = 3

    /// The most tiles an archive of `fileBytes` bytes may address, and the most directory entries
    /// its walk may read: 2^20, plus 64 per byte of the file. A run (one entry for many tiles with
    /// the same bytes) becomes a row per tile, so a small file must not unfold into an endless one;
    /// real archives address far fewer tiles than they have bytes.
    static func unfoldBudget(fileBytes: UInt64) -> UInt64 {
        let (perByte, overflow) = fileBytes.multipliedReportingOverflow(by: 64)
        return overflow ? .max : (1 << 20) + perByte
    }

    /// The most tile bytes an archive of `fileBytes` bytes may unfold to (each run's tile bytes once
    /// per tile): 1 GiB, plus 64 per byte of the file.
    static func byteBudget(fileBytes: UInt64) -> UInt64 {
        let (perByte, overflow) = fileBytes.multipliedReportingOverflow(by: 64)
        return overflow ? .max : (1 << 30) + perByte
    }
    /// Tile bytes of the entries gathered before they are read, and the most one read (or range
    /// request) takes, unless one tile is larger.
    static let spanBytes: UInt64 = 16 << 20
    /// Tile entries gathered before they are read, at most.
    static let spanEntries = 65536
    /// Rows, and tile bytes, gathered before one batch insert.
    static let batchRows = 4096
    static let batchBytes = 8 << 20

    /// The archive at `path` with its header checked, when `path` is PMTiles by its first bytes
    /// or its name, or is an `http(s)://` URL; nil for anything else (an MBTiles file, read as before).
    static func open(_ path: String) throws(ImportError) -> ImportPMTiles? {
        // The spec puts the header and the root directory in the first 16 KiB: one request.
        if RangedArchive.isRemote(path) {
            let remote = try RangedArchive(path)
            let start = try remote.open(prefix: PMTiles.maxRootLength + PMTiles.headerLength)
            return try open(path, source: .ranged(remote), size: remote.size, start: start)
        }
        guard FileSystem.exists(path) else { throw .unreadable(file: path, reason: "no such file") }
        let file: ReadableFile
        let size: UInt64
        let start: Data
        do {
            file = try ReadableFile(path: path)
            size = UInt64(max(0, try file.size()))
            start = try file.read(fromOffset: 0, count: Int(min(size, UInt64(PMTiles.headerLength))))
        } catch {
            throw .unreadable(file: path, reason: "\(error)")
        }
        guard start.starts(with: Data("PMTiles".utf8)) || path.lowercased().hasSuffix(".pmtiles") else { return nil }
        return try open(path, source: .file(file), size: size, start: start)
    }

    private static func open(_ path: String, source: Source, size: UInt64, start: Data) throws(ImportError) -> ImportPMTiles {
        let header: PMTiles.Header
        do { header = try PMTiles.Header(parsing: start) } catch { throw .badPMTiles(file: path, reason: error.reason) }
        let archive = ImportPMTiles(path: path, source: source, size: size, header: header)
        try archive.checkHeader()
        return archive
    }

    /// The bytes received and requests made, for an archive read by range.
    var fetched: (bytes: UInt64, requests: Int)? {
        if case .ranged(let remote) = source { return (remote.fetched, remote.requests) }
        return nil
    }

    /// For an archive read by range, its `Last-Modified` time, when the server gave one.
    var modified: Date? {
        if case .ranged(let remote) = source { return remote.modified }
        return nil
    }

    /// `count` bytes at `offset` from the archive's start (checked to lie inside it by the caller).
    func read(offset: UInt64, count: Int) throws(ImportError) -> Data {
        guard count > 0 else { return Data() }
        switch source {
        case .file(let file):
            do { return try file.read(fromOffset: offset, count: count) } catch { throw .unreadable(file: path, reason: "\(error)") }
        case .ranged(let remote):
            return try remote.read(offset: offset, count: count)
        }
    }

    /// `count` bytes of a leaf directory at `offset` from the archive's start; by range, through a
    /// window read ahead, as the walk reads leaves front to back.
    private func readLeaf(offset: UInt64, count: Int) throws(ImportError) -> Data {
        switch source {
        case .file: return try read(offset: offset, count: count)
        case .ranged(let remote):
            return try remote.leafDirectory(
                offset: offset, count: count, section: (header.leafDirectoriesOffset, header.leafDirectoriesLength))
        }
    }

    /// The header's sections lie inside the file and its bytes are ones mappack can turn into MBTiles.
    private func checkHeader() throws(ImportError) {
        let sections: [(String, UInt64, UInt64)] = [
            ("the root directory", header.rootOffset, header.rootLength),
            ("the metadata", header.metadataOffset, header.metadataLength),
            ("the leaf directories", header.leafDirectoriesOffset, header.leafDirectoriesLength),
            ("the tile data", header.tileDataOffset, header.tileDataLength),
        ]
        for (what, offset, length) in sections {
            let (end, overflow) = offset.addingReportingOverflow(length)
            guard !overflow, end <= size else {
                throw .badPMTiles(
                    file: path,
                    reason: "\(what) (offset \(offset), length \(length)) ends past the end of the file (\(size) bytes): truncated or damaged")
            }
        }
        guard header.rootLength > 0 else { throw .badPMTiles(file: path, reason: "the root directory's length is 0") }
        guard header.rootLength <= UInt64(Self.maxDirectoryBytes) else {
            throw .badPMTiles(file: path, reason: "the root directory takes \(header.rootLength) bytes, over \(Self.maxDirectoryBytes)")
        }
        guard header.metadataLength <= UInt64(Self.maxMetadataBytes) else {
            throw .badPMTiles(file: path, reason: "the metadata takes \(header.metadataLength) bytes, over \(Self.maxMetadataBytes)")
        }
        switch header.internalCompression {
        case .none, .gzip, .unknown: break
        case .brotli, .zstd:
            throw .badPMTiles(
                file: path, reason: "its directories and metadata are \(header.internalCompression) compressed; mappack reads gzip or none")
        }
        switch header.tileCompression {
        case .none, .gzip, .unknown: break
        case .brotli, .zstd:
            throw .badPMTiles(
                file: path, reason: "its tiles are \(header.tileCompression) compressed, which MBTiles readers cannot take; use gzip or none")
        }
    }

    /// Creates the scratch MBTiles 1.3 file at `scratch` with the archive's metadata (`metadata`
    /// with `format`, `minzoom`, `maxzoom`, `bounds`, `center` from the header, the metadata's
    /// strings as rows and its other members, `vector_layers` first among them, as `json`) and an
    /// empty `tiles` table, in an open transaction that `finish` commits.
    func create(_ scratch: String) throws -> SQLiteDatabase {
        let metadata = try metadataRows()
        let database = try TileDatabases.create(scratch)
        try database.execute(
            """
            CREATE TABLE metadata (name TEXT, value TEXT);
            CREATE UNIQUE INDEX name ON metadata (name);
            CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
            BEGIN;
            """)
        try database.executeMany(
            "INSERT INTO metadata (name, value) VALUES (?, ?)", metadata.sorted { $0.key < $1.key }.map { [.text($0.key), .text($0.value)] })
        return database
    }

    /// Walks every directory, checking it, and counts the tiles and their bytes; reads no tile data.
    func survey(into database: SQLiteDatabase) throws -> Survey {
        var walk = Walk(database: database, wanted: nil, filling: false)
        try walk(archive: self)
        return walk.survey
    }

    /// Walks the directories and writes a row to `tiles` for each tile that `wanted` takes (asked
    /// with its zoom, column and XYZ row; every tile, with its bytes, without it), reading the bytes
    /// of the tiles it takes whole only. With `wanted`, the leaves and runs that hold no tile it may
    /// take are not read.
    ///
    /// With `shares` (a shard's: two ascending fractions of the work) and `totals` (this archive's
    /// `survey`), only the tiles of the share's run: from the first tile id at which the tiles
    /// before it over all tiles and their bytes over all bytes (weighed by
    /// `ImportShardPlan.tileWeight`) reach the first share, up to the one that reaches the second
    /// (the run's ids are the result's `cuts`). Every shard finds the same ids for the same share,
    /// so the runs meet. The leaves of the root that lie outside the run, or hold no tile `wanted`
    /// may take, are passed over with the counts `totals.marks` kept.
    ///
    /// With `place`, each tile is asked there once, instead of `wanted` (which still answers for the
    /// squares of tiles that leaves and runs hold): a shard places the tiles of its run as it meets
    /// them (`ImportPlacement.Placer`) and reads the bytes of those placed.
    @discardableResult
    func fill(
        _ database: SQLiteDatabase, wanted: ((Int, Int64, Int64) -> Want)?, totals: Survey? = nil, shares: [Double] = [],
        place: ((Int, Int64, Int64) throws -> Want)? = nil
    ) throws -> Survey {
        var walk = Walk(database: database, wanted: wanted, filling: true)
        walk.place = place
        if let totals, !shares.isEmpty {
            walk.totals = (Double(max(1, totals.tiles)), Double(max(1, totals.bytes)))
            walk.shares = shares
            walk.marks = totals.marks
        }
        try walk(archive: self)
        try walk.flush()
        while walk.survey.cuts.count < shares.count { walk.survey.cuts.append(.max) }
        return walk.survey
    }

    /// Writes every tile and the metadata as the MBTiles 1.3 file at `scratch` (`create`, `fill`,
    /// `finish`); returns the number of tiles.
    @discardableResult
    func convert(to scratch: String) throws -> Int {
        let database = try create(scratch)
        let survey = try fill(database, wanted: nil)
        try finish(database)
        return survey.tiles
    }

    /// Indexes the rows and commits.
    func finish(_ database: SQLiteDatabase) throws {
        // Built after the rows: ascending tile ids (checked) make every z/x/y unique.
        try database.execute("CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row); COMMIT;")
    }

    /// The entries of the directory at `offset` (from the file's start), inflated when the header
    /// says so, and the bytes it inflated to; refused, before they are decoded, when there are more
    /// than `maxEntries` or the bytes are more than `maxBytes`.
    fileprivate func directory(
        offset: UInt64, length: UInt64, leaf: Bool, what: String, maxEntries: UInt64, read: UInt64, maxBytes: UInt64, inflatedBefore: UInt64
    ) throws -> (entries: [PMTiles.Entry], bytes: UInt64) {
        let raw = leaf ? try readLeaf(offset: offset, count: Int(length)) : try self.read(offset: offset, count: Int(length))
        let bytes = try inflated(raw, limit: Self.maxDirectoryBytes, what: what)
        guard UInt64(bytes.count) <= maxBytes else {
            throw ImportError.badPMTiles(
                file: path,
                reason:
                    "\(what) inflates to \(bytes.count) bytes; with the \(inflatedBefore) of the directories read before it, the directories inflate to more than the \(inflatedBefore + maxBytes) bytes a file of \(size) bytes may (1 GiB, plus 64 per byte of the file)"
            )
        }
        do {
            let count = try PMTiles.entryCount(ofDirectory: bytes)
            guard count <= maxEntries else {
                throw ImportError.badPMTiles(
                    file: path,
                    reason:
                        "\(what) holds \(count) entries" + (read > 0 ? "; with the \(read) of the directories before it, that is" : ",")
                        + " more than the \(read + maxEntries) entries a file of \(size) bytes may hold (2^20, plus 64 per byte of the file)"
                )
            }
            return (try PMTiles.entries(ofDirectory: bytes), UInt64(bytes.count))
        } catch let error as PMTiles.Malformed {
            throw ImportError.badPMTiles(file: path, reason: "\(what): \(error.reason)")
        }
    }

    /// `bytes` inflated (gzip, or found to be gzip when the header says unknown), refused past `limit`.
    private func inflated(_ bytes: Data, limit: Int, what: String) throws(ImportError) -> Data {
        let compressed =
            switch header.internalCompression {
            case .gzip: true
            case .unknown: Zlib.wrapping(of: bytes) != .none
            default: false
            }
        guard compressed else { return bytes }
        do { return try Zlib.inflate(bytes, limit: limit) } catch { throw .badPMTiles(file: path, reason: "\(what): \(error.reason)") }
    }

    /// The MBTiles metadata rows: the header's facts, the JSON metadata's strings, and its other
    /// members (`vector_layers`, `tilestats`, …) in `json`, merged into a `json` string when there
    /// is one (as a converter that keeps MBTiles' rows verbatim writes them).
    private func metadataRows() throws(ImportError) -> [String: String] {
        var rows: [String: String] = [:]
        if header.metadataLength > 0 {
            let bytes = try read(offset: header.metadataOffset, count: Int(header.metadataLength))
            let text = try inflated(bytes, limit: Self.maxMetadataBytes, what: "the metadata")
            guard let object = try? JSONSerialization.jsonObject(with: text) as? [String: Any] else {
                throw .badPMTiles(file: path, reason: "the metadata is not a JSON object")
            }
            var members: [String: Any] = [:]
            for (name, value) in object {
                if let string = value as? String { rows[name] = string } else { members[name] = value }
            }
            if !members.isEmpty {
                var json = rows["json"].flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] } ?? [:]
                json.merge(members) { _, member in member }
                guard let encoded = try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys, .withoutEscapingSlashes]) else {
                    throw .badPMTiles(file: path, reason: "the metadata's members cannot be written back as JSON")
                }
                rows["json"] = String(decoding: encoded, as: UTF8.self)
            }
        }
        let format: String? =
            switch header.tileType {
            case .mvt: "pbf"
            case .png: "png"
            case .jpeg: "jpg"
            case .webp: "webp"
            case .avif: "avif"
            case .unknown: rows["format"]
            }
        guard let format else {
            throw .badPMTiles(file: path, reason: "the header's tile type is 0 (unknown) and the metadata names no format")
        }
        rows["format"] = format
        rows["minzoom"] = String(header.minZoom)
        rows["maxzoom"] = String(header.maxZoom)
        rows["bounds"] = header.bounds.map { "\($0)" }.joined(separator: ",")
        rows["center"] = "\(header.center[0]),\(header.center[1]),\(header.centerZoom)"
        return rows
    }
}

/// The walk over the directories: checks each entry against the archive and the entries before
/// it; counts the tiles per zoom (`survey`, which keeps the counts after each leaf of the root);
/// finds the ids where `shares` begin; and, `filling`, reads the bytes of the tiles of the run
/// between them (every tile without `shares`) that `wanted` takes in large spans and inserts a row
/// per tile in batches.
private struct Walk {
    let database: SQLiteDatabase
    let wanted: ((Int, Int64, Int64) -> ImportPMTiles.Want)?
    let filling: Bool
    /// Asked once for each tile a fill meets, instead of `wanted`, when given.
    var place: ((Int, Int64, Int64) throws -> ImportPMTiles.Want)?
    /// The shares of the work (ascending fractions) whose first ids the survey finds, into
    /// `survey.cuts`: a tile weighs `ImportShardPlan.tileWeight` of a tile over all `totals.tiles`,
    /// and the first tile of an entry the rest of its new bytes (`Survey.bytes`) over all
    /// `totals.bytes`, so a share holds its fraction of both the placing and the bytes fetched (a
    /// blob is fetched once).
    var shares: [Double] = []
    var totals: (tiles: Double, bytes: Double) = (1, 1)
    /// A shard's fill: the survey's counts after each leaf of the root (`Survey.marks`), and how
    /// many of those leaves the walk has passed.
    var marks: [ImportPMTiles.Survey.Mark] = []
    var rootLeaves = 0
    /// The end of the furthest tile bytes an entry pointed to so far (`Survey.bytes`).
    var highWater: UInt64 = 0
    var survey = ImportPMTiles.Survey()
    /// Tiles per zoom so far.
    var zoomTiles = [Int](repeating: 0, count: PMTiles.maxZoom + 1)
    /// Tile entries gathered (`filling`), their distinct bytes, and the wanted tiles of each
    /// (position in `spanEntries`, zoom, column, TMS row).
    var spanEntries: [PMTiles.Entry] = []
    var spanBytes: UInt64 = 0
    var spanTiles: [(entry: Int, z: Int, x: Int64, row: Int64)] = []
    /// The lowest id the next entry may have (ids ascend over the whole walk).
    var next: UInt64 = 0
    /// Tiles addressed so far, and the most allowed (the header's count, when it gives one).
    var tiles = 0
    var addressed: UInt64 = 0
    var limit: UInt64 = 0
    /// Tile entries (not leaf pointers) read so far, and the most allowed.
    var tileEntries: UInt64 = 0
    var entryLimit: UInt64 = 0
    /// Entries of every directory read so far (leaf pointers too), and the most allowed.
    var directoryEntries: UInt64 = 0
    var directoryEntryLimit: UInt64 = 0
    /// Bytes the directories read so far inflated to (a leaf once per visit), and the most allowed.
    var directoryBytes: UInt64 = 0
    var directoryByteLimit: UInt64 = 0
    /// Tile bytes written so far (a run's once per tile), and the most allowed.
    var unfoldedBytes: UInt64 = 0
    var byteLimit: UInt64 = 0
    var pending: [[SQLValue]] = []
    var pendingBytes = 0

    init(database: SQLiteDatabase, wanted: ((Int, Int64, Int64) -> ImportPMTiles.Want)?, filling: Bool) {
        self.database = database
        self.wanted = wanted
        self.filling = filling
    }

    /// Walks the whole archive from its root, within the budgets its size allows.
    mutating func callAsFunction(archive: ImportPMTiles) throws {
        let header = archive.header
        let budget = ImportPMTiles.unfoldBudget(fileBytes: archive.size)
        limit = header.addressedTiles > 0 ? min(header.addressedTiles, budget) : budget
        entryLimit = header.tileEntries > 0 ? min(header.tileEntries, budget) : budget
        directoryEntryLimit = budget
        directoryByteLimit = ImportPMTiles.byteBudget(fileBytes: archive.size)
        byteLimit = ImportPMTiles.byteBudget(fileBytes: archive.size)
        let what = "the root directory"
        try self(
            entries: try directory(offset: header.rootOffset, length: header.rootLength, leaf: false, what: what, archive: archive), depth: 0,
            what: what, archive: archive)
        try flushSpans(archive: archive)
        survey.tiles = tiles
        let zooms = zoomTiles.indices.filter { zoomTiles[$0] > 0 }
        if let low = zooms.first, let high = zooms.last { survey.zooms = low...high }
    }

    /// The highest tile id an import takes (the last tile of zoom 30).
    private static let lastID = ((UInt64(1) << 62) - 1) / 3 - 1

    /// The entries of one directory, counted against `directoryEntryLimit` before they are decoded,
    /// its inflated bytes against `directoryByteLimit`.
    mutating func directory(offset: UInt64, length: UInt64, leaf: Bool, what: String, archive: ImportPMTiles) throws -> [PMTiles.Entry] {
        let entries = try archive.directory(
            offset: offset, length: length, leaf: leaf, what: what, maxEntries: directoryEntryLimit - directoryEntries, read: directoryEntries,
            maxBytes: directoryByteLimit - directoryBytes, inflatedBefore: directoryBytes)
        directoryEntries += UInt64(entries.entries.count)
        directoryBytes += entries.bytes
        return entries.entries
    }

    /// Walks `entries`, a directory whose ids must lie in `covered` (a leaf's: from its entry's id
    /// in the parent up to the next entry's), writing their tiles and walking their leaves.
    mutating func callAsFunction(
        entries: [PMTiles.Entry], depth: Int, what: String, archive: ImportPMTiles, covered: Range<UInt64> = 0..<UInt64.max
    ) throws {
        let header = archive.header
        func refuse(_ reason: String) -> ImportError { .badPMTiles(file: archive.path, reason: "\(what): " + reason) }
        // Each id once, ascending, inside the parent's range, before any is followed: a leaf that
        // several entries point to, or entries whose ids never advance, would be walked again and again.
        for (index, entry) in entries.enumerated() {
            if index > 0, entry.tileID <= entries[index - 1].tileID {
                throw refuse("tile ids are not ascending: tile id \(entry.tileID) comes after tile id \(entries[index - 1].tileID)")
            }
            guard covered.contains(entry.tileID) else {
                throw refuse(
                    "the entry for tile id \(entry.tileID) lies outside the range its parent's entry covers (tile ids \(covered.lowerBound) to \(covered.upperBound - 1))"
                )
            }
        }
        for (index, entry) in entries.enumerated() {
            guard entry.tileID >= next else {
                throw refuse("tile ids are not ascending: tile id \(entry.tileID) comes after tile id \(next - 1)")
            }
            guard entry.length > 0 else { throw refuse("the entry for tile id \(entry.tileID) has length 0") }
            if entry.runLength == 0 {
                // A leaf directory.
                guard depth < ImportPMTiles.maxLeafDepth else {
                    throw refuse("the entry for tile id \(entry.tileID) points to a leaf directory deeper than \(ImportPMTiles.maxLeafDepth) levels")
                }
                let (end, overflow) = entry.offset.addingReportingOverflow(entry.length)
                guard !overflow, end <= header.leafDirectoriesLength else {
                    throw refuse(
                        "the entry for tile id \(entry.tileID) (run length 0: a leaf directory at offset \(entry.offset), length \(entry.length)) ends past the leaf directories' \(header.leafDirectoriesLength) bytes"
                    )
                }
                guard entry.length <= UInt64(ImportPMTiles.maxDirectoryBytes) else {
                    throw refuse(
                        "the leaf directory for tile id \(entry.tileID) takes \(entry.length) bytes, over \(ImportPMTiles.maxDirectoryBytes)")
                }
                let leaf = "the leaf directory at offset \(entry.offset) (depth \(depth + 1))"
                let upper = index + 1 < entries.count ? entries[index + 1].tileID : covered.upperBound
                if depth == 0, filling, !shares.isEmpty, rootLeaves < marks.count {
                    // A shard's fill (the survey checked every leaf) passes over a leaf of the root
                    // outside its run, or with no tile `wanted` may take, with the survey's counts
                    // after it. Its tiles weigh from `before` up to less than `after`.
                    let mark = marks[rootLeaves]
                    rootLeaves += 1
                    let before = weight(tiles: tiles, bytes: survey.bytes)
                    let after = weight(tiles: mark.tiles, bytes: mark.bytes)
                    let outside = after < shares[0] || (shares[1] < 1 && before >= shares[1])
                    if outside || !mayWant(entry.tileID..<upper, within: survey.cuts.isEmpty ? 0..<UInt64.max : run) {
                        tiles = mark.tiles
                        survey.bytes = mark.bytes
                        highWater = mark.highWater
                        next = upper
                        continue
                    }
                } else if filling, shares.isEmpty, wanted != nil, !mayWant(entry.tileID..<upper, within: nil) {
                    continue
                }
                try self(
                    entries: try directory(
                        offset: header.leafDirectoriesOffset + entry.offset, length: entry.length, leaf: true, what: leaf, archive: archive),
                    depth: depth + 1, what: leaf, archive: archive, covered: entry.tileID..<upper)
                if depth == 0, !filling { survey.marks.append(.init(tiles: tiles, bytes: survey.bytes, highWater: highWater)) }
                continue
            }
            let (end, overflow) = entry.offset.addingReportingOverflow(entry.length)
            guard !overflow, end <= header.tileDataLength else {
                throw refuse(
                    "tile id \(entry.tileID)'s bytes (offset \(entry.offset), length \(entry.length)) end past the tile data's \(header.tileDataLength) bytes"
                )
            }
            guard entry.length <= UInt64(ImportPMTiles.maxTileBytes) else {
                throw refuse("tile id \(entry.tileID) takes \(entry.length) bytes, over \(ImportPMTiles.maxTileBytes)")
            }
            let (last, past) = entry.tileID.addingReportingOverflow(entry.runLength - 1)
            guard !past, last <= Self.lastID else {
                throw refuse("the run of \(entry.runLength) tiles from tile id \(entry.tileID) goes past zoom 30, the deepest mappack imports")
            }
            tileEntries += 1
            guard tileEntries <= entryLimit else {
                throw refuse(
                    "the entry for tile id \(entry.tileID) is tile entry \(tileEntries), past the \(entryLimit) the header's tile entry count (or mappack's bound) allows"
                )
            }
            let (total, more) = addressed.addingReportingOverflow(entry.runLength)
            guard !more, total <= limit else {
                throw refuse(
                    "the entry for tile id \(entry.tileID) (run length \(entry.runLength)) makes the archive address more than \(limit) tiles (the header's addressed tile count, or at most 2^20 plus 64 per byte of the file)"
                )
            }
            addressed = total
            let (unfolded, wide) = entry.runLength.multipliedReportingOverflow(by: entry.length)
            let (written, beyond) = unfoldedBytes.addingReportingOverflow(unfolded)
            guard !wide, !beyond, written <= byteLimit else {
                throw refuse(
                    "the entry for tile id \(entry.tileID) (run length \(entry.runLength), \(entry.length) bytes each) unfolds the tiles past \(byteLimit) bytes (1 GiB plus 64 per byte of the file)"
                )
            }
            unfoldedBytes = written
            let fresh = entry.offset >= highWater ? entry.length : 0
            highWater = max(highWater, entry.offset + entry.length)
            if !shares.isEmpty {
                // The first ids of the shares that begin in this run: the first tile whose weight
                // before it reaches the share. A share of 0 begins at the first tile, one of 1 past the last.
                let weighed = weight(tiles: tiles, bytes: survey.bytes)
                let tile = ImportShardPlan.tileWeight / totals.tiles
                let first = tile + (1 - ImportShardPlan.tileWeight) * Double(fresh) / totals.bytes
                while survey.cuts.count < shares.count, shares[survey.cuts.count] < 1 {
                    let short = shares[survey.cuts.count] - weighed
                    let into = short <= 0 ? 0 : max(1, 1 + ((short - first) / tile).rounded(.up))
                    guard into < Double(entry.runLength) else { break }
                    survey.cuts.append(entry.tileID + UInt64(into))
                }
            }
            survey.bytes += fresh
            let skipped =
                filling
                && (shares.isEmpty
                    ? entry.runLength > 16 && !mayWant(entry.tileID..<(last + 1), within: nil)
                    : !mayWant(entry.tileID..<(last + 1), within: run))
            if skipped || !filling {
                // Counted by zoom without decoding each tile: the survey, and the runs a fill skips.
                var id = entry.tileID
                while id <= last {
                    let zoom = Self.zoom(of: id)
                    let end = min(last, Self.firstID(ofZoom: zoom + 1) - 1)
                    zoomTiles[zoom] += Int(end - id + 1)
                    tiles += Int(end - id + 1)
                    id = end + 1
                }
                next = last + 1
                continue
            }
            var taken = false
            for id in entry.tileID...last {
                let tile = PMTiles.tile(id: id)!
                zoomTiles[tile.z] += 1
                tiles += 1
                if !shares.isEmpty, !run.contains(id) { continue }
                switch try place?(tile.z, tile.x, tile.y) ?? wanted?(tile.z, tile.x, tile.y) ?? .bytes {
                case .skip: continue
                case .address:
                    pending.append([.integer(Int64(tile.z)), .integer(tile.x), .integer((Int64(1) << tile.z) - 1 - tile.y), .blob(Data())])
                    if pending.count >= ImportPMTiles.batchRows { try flush() }
                    continue
                case .bytes: break
                }
                if !taken {
                    taken = true
                    spanEntries.append(entry)
                    spanBytes += entry.length
                }
                spanTiles.append((spanEntries.count - 1, tile.z, tile.x, (Int64(1) << tile.z) - 1 - tile.y))
                if spanTiles.count >= ImportPMTiles.spanEntries {
                    try flushSpans(archive: archive)
                    taken = false
                }
            }
            if spanBytes >= ImportPMTiles.spanBytes || spanEntries.count >= ImportPMTiles.spanEntries { try flushSpans(archive: archive) }
            next = last + 1
        }
    }

    /// The first tile id of `zoom`: the tiles of every lower zoom, counted.
    static func firstID(ofZoom zoom: Int) -> UInt64 { ((UInt64(1) << (2 * UInt64(zoom))) - 1) / 3 }

    /// The zoom of tile id `id` (at most zoom 30's last, `lastID`).
    static func zoom(of id: UInt64) -> Int {
        var zoom = 0
        while firstID(ofZoom: zoom + 1) <= id { zoom += 1 }
        return zoom
    }

    /// The weight of the tiles before one that has `tiles` tiles and `bytes` new tile bytes before
    /// it, against `totals` (`shares`): the same in every shard for the same tile, however it
    /// got there (a leaf walked or passed over with the survey's counts).
    func weight(tiles: Int, bytes: UInt64) -> Double {
        ImportShardPlan.tileWeight * Double(tiles) / totals.tiles + (1 - ImportShardPlan.tileWeight) * Double(bytes) / totals.bytes
    }

    /// A shard's run found so far: from its first tile id (none before that is found) to the next
    /// run's first (or every id past it, before that is found).
    var run: Range<UInt64> {
        guard let first = survey.cuts.first else { return 0..<0 }
        return first..<(survey.cuts.count > 1 ? survey.cuts[1] : .max)
    }

    /// Whether `wanted` may take a tile with an id in `asked` and in `within` (every id when nil;
    /// always, without `wanted`): the ids of each zoom split into the aligned blocks of 4^k
    /// positions the Hilbert curve fills a 2^k-tile square with, each asked as the one tile of
    /// zoom − k it covers. At most a few hundred questions, however many tiles the ids span.
    func mayWant(_ asked: Range<UInt64>, within: Range<UInt64>?) -> Bool {
        guard let wanted else { return true }
        let within = within ?? 0..<UInt64.max
        var id = max(asked.lowerBound, within.lowerBound)
        let upper = min(asked.upperBound, within.upperBound, Self.lastID + 1)
        while id < upper {
            let zoom = Self.zoom(of: id)
            let first = Self.firstID(ofZoom: zoom)
            let end = min(upper, Self.firstID(ofZoom: zoom + 1)) - first
            var position = id - first
            while position < end {
                var k = 0
                while k < zoom, position % (UInt64(1) << (2 * UInt64(k + 1))) == 0, position + (UInt64(1) << (2 * UInt64(k + 1))) <= end {
                    k += 1
                }
                let corner = PMTiles.tile(id: first + position)!
                if wanted(zoom - k, corner.x >> k, corner.y >> k) != .skip { return true }
                position += UInt64(1) << (2 * UInt64(k))
            }
            id = first + end
        }
        return false
    }

    /// Reads the bytes of the gathered entries as few spans as `TileSpans` makes of them, and queues
    /// a row for each wanted tile.
    mutating func flushSpans(archive: ImportPMTiles) throws {
        guard !spanEntries.isEmpty else { return }
        let spans = TileSpans(entries: spanEntries)
        var bytes: [Data] = []
        for span in spans.spans {
            bytes.append(try archive.read(offset: archive.header.tileDataOffset + span.lowerBound, count: Int(span.count)))
        }
        var tileBytes = [Data?](repeating: nil, count: spanEntries.count)
        for tile in spanTiles {
            let data: Data
            if let known = tileBytes[tile.entry] {
                data = known
            } else {
                let entry = spanEntries[tile.entry]
                let index = spans.index(of: entry.offset)
                let from = Int(entry.offset - spans.spans[index].lowerBound)
                data = bytes[index].subdata(in: from..<from + Int(entry.length))
                tileBytes[tile.entry] = data
            }
            pending.append([.integer(Int64(tile.z)), .integer(tile.x), .integer(tile.row), .blob(data)])
            pendingBytes += data.count
            if pending.count >= ImportPMTiles.batchRows || pendingBytes >= ImportPMTiles.batchBytes { try flush() }
        }
        spanEntries.removeAll(keepingCapacity: true)
        spanTiles.removeAll(keepingCapacity: true)
        spanBytes = 0
    }

    /// Inserts the rows gathered so far.
    mutating func flush() throws {
        try database.executeMany("INSERT INTO tiles (zoom_level, tile_column, tile_row, tile_data) VALUES (?, ?, ?, ?)", pending)
        pending.removeAll(keepingCapacity: true)
        pendingBytes = 0
    }
}

/// The byte ranges of the tile data section that hold a set of entries' bytes: sorted, runs that
/// touch merged, and runs further apart while a span's gaps stay within an eighth of its wanted
/// bytes (a gap costs its bytes, a request a round trip), each at most `ImportPMTiles.spanBytes`
/// long unless one entry is longer. Entries that share bytes (a deduplicated tile) share a span.
struct TileSpans {
    /// The spans, ascending and disjoint (offsets from the tile data section's start).
    private(set) var spans: [Range<UInt64>] = []

    init(entries: [PMTiles.Entry]) {
        let pieces = entries.map { $0.offset..<($0.offset + $0.length) }.sorted { $0.lowerBound < $1.lowerBound }
        // Bytes of the last span that are wanted, and that are not (its gaps).
        var wanted: UInt64 = 0
        var waste: UInt64 = 0
        for piece in pieces {
            if let last = spans.last, piece.upperBound <= last.upperBound { continue }
            if let last = spans.last {
                let gap = piece.lowerBound > last.upperBound ? piece.lowerBound - last.upperBound : 0
                let added = piece.upperBound - max(piece.lowerBound, last.upperBound)
                // A gap is read while the span's gaps stay within an eighth of its wanted bytes: a
                // shard's many neighbouring runs are one request, but the runs of other shards
                // between them are not read for it.
                if max(last.upperBound, piece.upperBound) - last.lowerBound <= ImportPMTiles.spanBytes,
                    gap == 0 || (waste + gap) * 8 <= wanted + added
                {
                    spans[spans.count - 1] = last.lowerBound..<piece.upperBound
                    wanted += added
                    waste += gap
                    continue
                }
            }
            spans.append(piece)
            wanted = UInt64(piece.count)
            waste = 0
        }
    }

    /// The position of the span holding the byte at `offset` (one of the entries').
    func index(of offset: UInt64) -> Int {
        var low = 0
        var high = spans.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if spans[middle].lowerBound <= offset { low = middle } else { high = middle - 1 }
        }
        return low
    }
}
