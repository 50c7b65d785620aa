import Foundation
import MapFormat
import MapIO

/// A PMTiles v3 `--tiles` archive (the `PMTiles` magic with version 3, or a `.pmtiles` name),
/// turned into a scratch MBTiles 1.3 file in the import's staging folder, which the import then
/// reads as it reads any MBTiles and deletes at the end.
///
/// It streams: directories are read one at a time (the root, then each leaf where the walk reaches
/// it, at most three leaves deep), each inflated within `maxDirectoryBytes`; tile bytes come with
/// `pread` through one window of `windowBytes` (a clustered archive is read front to back), or one
/// read for a tile larger than the window; rows go to SQLite in bounded batches. A run (one entry
/// for consecutive tile ids with the same bytes) becomes one row per tile, as MBTiles has no runs.
/// Tiles are stored as the archive holds them (gzipped vector tiles stay gzipped).
///
/// Everything the walk reads is checked against the file first, so a damaged or hostile archive
/// is refused as bad input naming the file (`ImportError.badPMTiles`), never read past its end.
struct ImportPMTiles {
    /// The `--tiles` path, as given.
    let path: String
    let file: ReadableFile
    let size: UInt64
    let header: PMTiles.Header

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
    /// Tile data read at once.
    static let windowBytes = 1 << 20
    /// Rows, and tile bytes, gathered before one batch insert.
    static let batchRows = 4096
    static let batchBytes = 8 << 20

    /// The archive at `path` with its header checked, when `path` is PMTiles by its first bytes
    /// or its name; nil for anything else (an MBTiles file, read as before).
    static func open(_ path: String) throws(ImportError) -> ImportPMTiles? {
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
        let header: PMTiles.Header
        do { header = try PMTiles.Header(parsing: start) } catch { throw .badPMTiles(file: path, reason: error.reason) }
        let archive = ImportPMTiles(path: path, file: file, size: size, header: header)
        try archive.checkHeader()
        return archive
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

    /// Writes the archive's tiles and metadata as an MBTiles 1.3 file at `scratch` (`tiles` with
    /// TMS rows; `metadata` with `format`, `minzoom`, `maxzoom`, `bounds`, `center` from the header,
    /// the metadata's strings as rows and its other members, `vector_layers` first among them, as
    /// `json`); returns the number of tiles.
    @discardableResult
    func convert(to scratch: String) throws -> Int {
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
        var walk = Walk(database: database, tileData: TileDataWindow(file: file, section: header.tileDataOffset, length: header.tileDataLength))
        let budget = Self.unfoldBudget(fileBytes: size)
        walk.limit = header.addressedTiles > 0 ? min(header.addressedTiles, budget) : budget
        walk.entryLimit = header.tileEntries > 0 ? min(header.tileEntries, budget) : budget
        walk.directoryEntryLimit = budget
        walk.directoryByteLimit = Self.byteBudget(fileBytes: size)
        walk.byteLimit = Self.byteBudget(fileBytes: size)
        let what = "the root directory"
        try walk(
            entries: try walk.directory(offset: header.rootOffset, length: header.rootLength, what: what, archive: self), depth: 0, what: what,
            archive: self)
        try walk.flush()
        // Built after the rows: ascending tile ids (checked) make every z/x/y unique.
        try database.execute("CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row); COMMIT;")
        return walk.tiles
    }

    /// The entries of the directory at `offset` (from the file's start), inflated when the header
    /// says so, and the bytes it inflated to; refused, before they are decoded, when there are more
    /// than `maxEntries` or the bytes are more than `maxBytes`.
    fileprivate func directory(
        offset: UInt64, length: UInt64, what: String, maxEntries: UInt64, read: UInt64, maxBytes: UInt64, inflatedBefore: UInt64
    ) throws -> (entries: [PMTiles.Entry], bytes: UInt64) {
        let bytes = try inflated(try file.read(fromOffset: offset, count: Int(length)), limit: Self.maxDirectoryBytes, what: what)
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
            let bytes: Data
            do { bytes = try file.read(fromOffset: header.metadataOffset, count: Int(header.metadataLength)) } catch {
                throw .unreadable(file: path, reason: "\(error)")
            }
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
/// it, and inserts a row per tile in batches.
private struct Walk {
    let database: SQLiteDatabase
    var tileData: TileDataWindow
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

    init(database: SQLiteDatabase, tileData: TileDataWindow) {
        self.database = database
        self.tileData = tileData
    }

    /// The highest tile id an import takes (the last tile of zoom 30).
    private static let lastID = ((UInt64(1) << 62) - 1) / 3 - 1

    /// The entries of one directory, counted against `directoryEntryLimit` before they are decoded,
    /// its inflated bytes against `directoryByteLimit`.
    mutating func directory(offset: UInt64, length: UInt64, what: String, archive: ImportPMTiles) throws -> [PMTiles.Entry] {
        let entries = try archive.directory(
            offset: offset, length: length, what: what, maxEntries: directoryEntryLimit - directoryEntries, read: directoryEntries,
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
                try self(
                    entries: try directory(offset: header.leafDirectoriesOffset + entry.offset, length: entry.length, what: leaf, archive: archive),
                    depth: depth + 1, what: leaf, archive: archive, covered: entry.tileID..<upper)
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
            let bytes: Data
            do { bytes = try tileData.tile(offset: entry.offset, length: Int(entry.length)) } catch {
                throw ImportError.unreadable(file: archive.path, reason: "\(error)")
            }
            for id in entry.tileID...last {
                let tile = PMTiles.tile(id: id)!
                let tmsRow = (Int64(1) << tile.z) - 1 - tile.y
                pending.append([.integer(Int64(tile.z)), .integer(tile.x), .integer(tmsRow), .blob(bytes)])
                pendingBytes += bytes.count
                tiles += 1
                if pending.count >= ImportPMTiles.batchRows || pendingBytes >= ImportPMTiles.batchBytes { try flush() }
            }
            next = last + 1
        }
    }

    /// Inserts the rows gathered so far.
    mutating func flush() throws {
        try database.executeMany("INSERT INTO tiles (zoom_level, tile_column, tile_row, tile_data) VALUES (?, ?, ?, ?)", pending)
        pending.removeAll(keepingCapacity: true)
        pendingBytes = 0
    }
}

/// Tile bytes read through one window of the tile data section, so neighbouring tiles (all of
/// them, in a clustered archive) cost one `pread` per window, not one each.
private struct TileDataWindow {
    let file: ReadableFile
    /// The section's offset in the file and its length.
    let section: UInt64
    let length: UInt64
    /// The window's offset in the section and its bytes.
    var start: UInt64 = 0
    var bytes = Data()

    init(file: ReadableFile, section: UInt64, length: UInt64) {
        self.file = file
        self.section = section
        self.length = length
    }

    /// The `length` bytes at `offset` in the section (checked to lie inside it).
    mutating func tile(offset: UInt64, length count: Int) throws(FileError) -> Data {
        if offset >= start, offset + UInt64(count) <= start + UInt64(bytes.count) {
            let from = Int(offset - start)
            return bytes.subdata(in: from..<from + count)
        }
        guard count < ImportPMTiles.windowBytes else { return try file.read(fromOffset: section + offset, count: count) }
        bytes = try file.read(fromOffset: section + offset, count: Int(min(UInt64(ImportPMTiles.windowBytes), length - offset)))
        start = offset
        return bytes.prefix(count)
    }
}
