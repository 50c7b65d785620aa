import Foundation
import MapFormat
import MapIO

/// The tile databases among an image's files: SQLite files in MBTiles' shape (a `tiles` table of
/// `zoom_level`, `tile_column`, `tile_row` with TMS rows, and `tile_data`), as map data providers
/// ship them per region, and for `mappack serve` those of the image's cache seed (the overview's
/// low zooms; the tile outputs hold the recipe's regions only). The
/// `mbtiles` and `pmtiles` outputs copy tiles with SQLite's `ATTACH` (`pmtiles` then reads them in
/// Swift, one at a time); the `maplibre-offline` output re-wraps gzip tiles as zlib on the way.
///
/// Tile databases come in bundles, so they are input from outside: `tiles` and `metadata` are read
/// by `UntrustedDatabase`'s rules (plain tables only, the schema untrusted, a work limit that grows
/// with the file's size), the cache seed's on the device by the same ones.
package struct TileDatabases {
    /// One tile database: the region whose bundle holds it and its path in the store.
    package struct Source: Sendable {
        package let region: OutputRegion
        /// The store file and its bundle.
        package let file: OutputFile
        /// Its full path.
        package let path: String
        /// SQLite steps its reads may take (`workLimit(bytes:)`).
        let workLimit: Int64

        /// The build's error for this database, with `reason`.
        func refused(_ reason: String) -> BuildError {
            .tileDatabaseRefused(path: file.path, region: region.id, bundle: file.bundle, reason: reason)
        }

        /// Runs `body` under this database's work limit on `database`, turning a stop at the limit
        /// into the build's error.
        package func limited<T>(_ database: SQLiteDatabase, _ body: () throws -> T) throws -> T {
            do {
                return try database.withWorkLimit(steps: workLimit, body)
            } catch let error as SQLiteWorkLimitError {
                let bytes = UntrustedDatabase.bytes(ofWorkLimit: workLimit)
                throw refused("reading it took more than \(error.steps) SQLite steps, far more than a database of \(bytes) bytes needs")
            }
        }
    }

    /// The image's cache seed, whose tile databases (the overview's low zooms) join the outputs.
    package struct Seed {
        /// `cache-seed.sqlite`.
        let file: String
        /// Where its tile databases are copied to be attached (a folder the caller removes).
        let scratch: String
        /// The seed's regions with the files of their bundles, to name each database's region and bundle
        /// (a file none of them names goes under the first).
        let regions: [OutputRegion]

        package init(file: String, scratch: String, regions: [OutputRegion]) {
            self.file = file
            self.scratch = scratch
            self.regions = regions
        }
    }

    /// Every tile database of `regions`, in region order, then path order; then the seed's, in its
    /// entry order. Where two hold the same tile, the first wins: a region's own over the overview's.
    package let sources: [Source]
    /// With a folder, a database under it is read only when reached from it without a symbolic
    /// link (`FileSystem.isRegularFileBeneath`), when found and again before each single tile is
    /// read: `mappack serve` must not answer from a database planted outside the image or store.
    package let confinedTo: String?

    package init(regions: [OutputRegion], store: String, seed: Seed? = nil, confinedTo root: String? = nil) throws {
        confinedTo = root
        var found: [Source] = []
        for region in regions.sorted(by: { $0.id < $1.id }) {
            for file in region.files {
                try Task.checkCancellation()
                let path = store + "/" + file.path
                if let root, !TileDatabases.isReachable(path, beneath: root) { continue }
                guard let bytes = TileDatabases.sqliteFileSize(path) else { continue }
                let source = Source(region: region, file: file, path: path, workLimit: UntrustedDatabase.workLimit(bytes: bytes))
                if try TileDatabases.isTileDatabase(source) { found.append(source) }
            }
        }
        if let seed { found += try TileDatabases.seedSources(seed) }
        sources = found
    }

    /// False when `path` is under `root` but not reached from it as a regular file without a link.
    static func isReachable(_ path: String, beneath root: String) -> Bool {
        let prefix = root.hasSuffix("/") ? root : root + "/"
        guard path.hasPrefix(prefix) else { return true }
        return FileSystem.isRegularFileBeneath(root, String(path.dropFirst(prefix.count)))
    }

    /// Copies each tile database of the cache seed to `seed.scratch` (SQLite attaches files only),
    /// checked like the store's.
    private static func seedSources(_ seed: Seed) throws -> [Source] {
        try FileSystem.makeDirectories(seed.scratch)
        let database = try SQLiteDatabase(path: seed.file, readOnly: true)
        var owners: [String: (OutputRegion, OutputFile)] = [:]
        for region in seed.regions { for file in region.files where owners[file.path] == nil { owners[file.path] = (region, file) } }
        let entries = try database.query(
            "SELECT key FROM entries WHERE substr(data, 1, 16) = ? ORDER BY accessed", [.blob(sqliteMagic)])
        var found: [Source] = []
        for entry in entries {
            try Task.checkCancellation()
            let key = try entry["key", as: String.self]
            guard let (region, file) = owners[key] ?? seed.regions.first.map({ ($0, OutputFile(path: key, bundle: nil)) }) else { continue }
            let copy = seed.scratch + "/seed-\(found.count).db"
            let data = try database.firstRow("SELECT data FROM entries WHERE key = ?", [.text(key)])?["data", as: Data.self] ?? Data()
            try FileSystem.writeAtomically(data, to: copy)
            let source = Source(region: region, file: file, path: copy, workLimit: UntrustedDatabase.workLimit(bytes: Int64(data.count)))
            if try isTileDatabase(source) { found.append(source) }
        }
        return found
    }

    /// SQLite's file header, the first 16 bytes of every database.
    private static let sqliteMagic = Data("SQLite format 3\u{0}".utf8)

    /// The size of the file at `path` when it is a SQLite database (nil otherwise).
    private static func sqliteFileSize(_ path: String) -> Int64? {
        guard let file = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? file.close() }
        guard (try? file.read(upToCount: 16)) == sqliteMagic, let end = try? file.seekToEnd() else { return nil }
        return Int64(end)
    }

    /// The tables the outputs read from a tile database.
    private static let readTables = ["tiles", "metadata"]

    /// Whether the SQLite file at `path` has a `tiles` table or view with MBTiles' columns: for a
    /// tileset the user names on the command line (`mappack import --tiles`), which may be a view
    /// over other tables as some tools write it. Bundles' databases go through `isTileDatabase(_:)`.
    static func hasTilesTable(_ path: String) throws -> Bool {
        guard sqliteFileSize(path) != nil else { return false }
        return try hasMBTilesColumns(try UntrustedDatabase.open(path: path))
    }

    /// Whether `database` has a `tiles` with MBTiles' columns (a table or a view).
    private static func hasMBTilesColumns(_ database: SQLiteDatabase) throws -> Bool {
        let columns = try database.query("SELECT name FROM pragma_table_xinfo('tiles')").map { try $0["name", as: String.self] }
        return Set(["zoom_level", "tile_column", "tile_row", "tile_data"]).isSubset(of: columns)
    }

    /// Whether `source` is an MBTiles database (a `tiles` with MBTiles' columns); throws the build's
    /// error when it is one the outputs must not read (see the type's summary).
    static func isTileDatabase(_ source: Source) throws -> Bool {
        let database = try UntrustedDatabase.open(path: source.path)
        return try source.limited(database) {
            guard try hasMBTilesColumns(database) else { return false }
            for table in readTables {
                if let refusal = try UntrustedDatabase.refusal(of: table, in: database) { throw source.refused(refusal) }
            }
            return true
        }
    }

    /// Runs `body` in one transaction with the tile database `source` attached to `database` as
    /// `src` (attached outside it: SQLite detaches only outside a transaction), under the source's
    /// work limit and with its schema untrusted.
    static func attached<T>(_ source: Source, to database: SQLiteDatabase, _ body: () throws -> T) throws -> T {
        try database.execute("PRAGMA trusted_schema = OFF")
        _ = try database.query("ATTACH DATABASE ? AS src", [.text(source.path)])
        defer { try? database.execute("DETACH DATABASE src") }
        return try source.limited(database) { try database.transaction(body) }
    }

    /// A new output database at `path` whose bytes are a function of what goes in (fixed page
    /// size, no journal: nothing to roll back into on a fresh file that is staged, never live).
    /// Nothing is synced while it fills; `finish` makes the whole file durable once.
    static func create(_ path: String) throws -> SQLiteDatabase {
        let database = try SQLiteDatabase(path: path)
        try database.execute("PRAGMA page_size = 4096; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")
        return database
    }

    /// A new MBTiles file at `path` (as `create`), with the `metadata` and `tiles` tables and the
    /// unique indexes the MBTiles 1.3 specification gives them, still empty.
    static func createMBTiles(_ path: String) throws -> SQLiteDatabase {
        let database = try create(path)
        try database.execute(
            """
            CREATE TABLE metadata (name TEXT, value TEXT);
            CREATE UNIQUE INDEX name ON metadata (name);
            CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
            CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row);
            """)
        return database
    }

    /// Closes the output database at `path` and, with `sync`, syncs it (before it is renamed into place).
    static func finish(_ database: consuming SQLiteDatabase, path: String, sync: Bool) throws {
        _ = consume database
        if sync { try FileSystem.syncFile(path) }
    }

    /// A tile database's MBTiles `format`: its `metadata` row, else what its first tile's bytes are
    /// (gzip or zlib: `pbf`; `png`, `jpg`, `webp` by their signatures); nil when neither tells.
    package static func format(of source: Source) throws -> String? {
        let database = try UntrustedDatabase.open(path: source.path)
        return try source.limited(database) { () throws -> String? in
            if try database.firstRow("SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = 'metadata'") != nil,
                let row = try database.firstRow("SELECT value FROM metadata WHERE name = 'format' LIMIT 1"),
                let value = try row["value", as: String?.self]
            {
                return value
            }
            guard let tile = try database.firstRow("SELECT substr(tile_data, 1, 12) AS head FROM tiles LIMIT 1") else { return nil }
            let head = [UInt8](try tile["head", as: Data?.self] ?? Data())
            if Zlib.wrapping(of: Data(head)) != .none { return "pbf" }
            if head.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "png" }
            if head.starts(with: [0xFF, 0xD8, 0xFF]) { return "jpg" }
            if head.count >= 12, head.starts(with: Array("RIFF".utf8)), Array(head[8..<12]) == Array("WEBP".utf8) { return "webp" }
            return nil
        }
    }

    /// The sources' one tile format (nil when none tells); a mix is refused, naming each database's
    /// region and format, since one output file cannot hold two.
    package func commonFormat() throws -> String? {
        var uses: [BuildError.TileFormatUse] = []
        for source in sources {
            guard let format = try TileDatabases.format(of: source) else { continue }
            uses.append(BuildError.TileFormatUse(region: source.region.id, file: source.file.path, format: format))
        }
        let formats = Set(uses.map(\.format))
        guard formats.count <= 1 else {
            // One database of each format is enough to show the mix.
            var shown = Set<String>()
            throw BuildError.mixedTileFormats(uses.filter { shown.insert($0.format).inserted })
        }
        return formats.first
    }

    /// MBTiles' `json` metadata for vector tiles: the sources' `vector_layers` merged by layer id
    /// (fields united, the widest zoom range, the first description), as canonical JSON; nil when no
    /// source has any.
    package func vectorLayersJSON() throws -> String? {
        var layers: [String: [String: Any]] = [:]
        for source in sources {
            let database = try UntrustedDatabase.open(path: source.path)
            let text = try source.limited(database) { () throws -> String? in
                guard try database.firstRow("SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = 'metadata'") != nil,
                    let row = try database.firstRow("SELECT value FROM metadata WHERE name = 'json' LIMIT 1")
                else { return nil }
                return try row["value", as: String?.self]
            }
            guard let text, let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                let list = object["vector_layers"] as? [[String: Any]]
            else { continue }
            for layer in list {
                guard let id = layer["id"] as? String else { continue }
                var merged = layers[id] ?? ["id": id, "fields": [String: String]()]
                var fields = merged["fields"] as? [String: String] ?? [:]
                for (name, type) in layer["fields"] as? [String: String] ?? [:] where fields[name] == nil { fields[name] = type }
                merged["fields"] = fields
                if merged["description"] == nil, let description = layer["description"] as? String { merged["description"] = description }
                for (key, pick) in [("minzoom", { (a: Int, b: Int) in min(a, b) }), ("maxzoom", { (a: Int, b: Int) in max(a, b) })] {
                    if let value = layer[key] as? Int { merged[key] = (merged[key] as? Int).map { pick($0, value) } ?? value }
                }
                layers[id] = merged
            }
        }
        guard !layers.isEmpty else { return nil }
        let ordered = layers.keys.sorted().map { layers[$0]! }
        let data = try JSONSerialization.data(withJSONObject: ["vector_layers": ordered], options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    /// `[west, south, east, north]` around every box in `boxes` (nil when none is known). A box whose
    /// west is east of its east crosses the antimeridian; then the union spans every longitude.
    package static func union(_ boxes: [[Double]?]) -> [Double]? {
        let known = boxes.compactMap { $0 }.filter { $0.count == 4 }
        guard !known.isEmpty else { return nil }
        let south = known.map { $0[1] }.min()!
        let north = known.map { $0[3] }.max()!
        if known.contains(where: { $0[0] > $0[2] }) { return [-180, south, 180, north] }
        return [known.map { $0[0] }.min()!, south, known.map { $0[2] }.max()!, north]
    }

    /// Seconds since 1970 of an ISO 8601 build time (0 when it does not parse).
    static func epoch(_ built: String) -> Int64 {
        Int64(UTCTime.parseISO8601(built)?.timeIntervalSince1970 ?? 0)
    }
}
