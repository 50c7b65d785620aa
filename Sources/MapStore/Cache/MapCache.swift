import Foundation
import MapFormat
import MapIO

/// The map cache (`cache/cache.sqlite`, `CacheSchema`): entries evicted least recently used first
/// when their bytes exceed the limit. Never touches persistent storage.
final class MapCache {
    let path: String
    private let db: SQLiteDatabase

    /// Opens or creates the cache database in `folder`.
    init(folder: String) throws {
        try FileSystem.makeDirectoriesDurably(folder)
        path = folder + "/cache.sqlite"
        db = try SQLiteDatabase(path: path)
        try db.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
        let hasEntries = try !db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'entries'").isEmpty
        if !hasEntries {
            try db.transaction {
                try db.execute(CacheSchema.create)
                try setMeta(.format, CacheSchema.formatTag.description)
            }
        }
    }

    /// Sum of the entries' data bytes (what the limit bounds).
    func size() throws -> Int64 { try db.firstRow("SELECT COALESCE(SUM(size), 0) AS total FROM entries")?["total", as: Int64.self] ?? 0 }

    /// Number of entries.
    func count() throws -> Int { try db.firstRow("SELECT COUNT(*) AS count FROM entries")?["count", as: Int.self] ?? 0 }

    /// The byte limit, when one is set.
    func limit() throws -> Int64? {
        try meta(.limitBytes).flatMap { Int64($0) }
    }

    /// Sets or removes the limit and evicts down to it.
    func setLimit(_ bytes: Int64?) throws {
        if let bytes {
            try setMeta(.limitBytes, String(bytes))
        } else {
            try db.query("DELETE FROM meta WHERE key = ?", [.text(CacheSchema.MetaKey.limitBytes.rawValue)])
        }
        try evict()
    }

    /// Deletes least recently used entries until the total is within the limit.
    @discardableResult
    func evict() throws -> Int {
        guard let limit = try limit() else { return 0 }
        var total = try size()
        guard total > limit else { return 0 }
        var victims: [[SQLValue]] = []
        try db.forEachRow("SELECT key, size FROM entries ORDER BY accessed ASC, key ASC") { row throws(SQLiteError) in
            guard total > limit else { return }
            total -= try row["size", as: Int64.self]
            victims.append([try row["key"]])
        }
        try db.transaction { try db.executeMany("DELETE FROM entries WHERE key = ?", victims) }
        return victims.count
    }

    /// The entry's data, marking it most recently used.
    func data(for key: String) throws -> Data? {
        guard let data = try db.firstRow("SELECT data FROM entries WHERE key = ?", [.text(key)])?["data", as: Data.self] else { return nil }
        try db.query("UPDATE entries SET accessed = (SELECT COALESCE(MAX(accessed), 0) + 1 FROM entries) WHERE key = ?", [.text(key)])
        return data
    }

    /// Adds or replaces an entry as most recently used, then evicts.
    func put(_ data: Data, for key: String, region: RegionID?) throws {
        try db.query(
            """
            INSERT OR REPLACE INTO entries(key, region, data, size, sha256, accessed)
            VALUES (?, ?, ?, ?, ?, (SELECT COALESCE(MAX(accessed), 0) + 1 FROM entries))
            """,
            [.text(key), .text(region?.rawValue ?? ""), .blob(data), .integer(Int64(data.count)), .blob(Data(SHA256.digest(data).bytes))])
        try evict()
    }

    /// Removes every entry (keeps the limit) and gives the space back.
    func clear() throws {
        try db.execute("DELETE FROM entries")
        try db.execute("VACUUM")
    }

    /// The bundles each seeded region's entries came from (`CacheSchema.MetaKey.bundles`); empty when
    /// nothing is recorded (a cache seeded by an older build).
    func regionBundles() throws -> [RegionID: Set<BundleDigest>] {
        try meta(.bundles).map(CacheSchema.decodeBundles) ?? [:]
    }

    /// The map version the cached data belongs to, nil when unknown (never seeded nor reset).
    func mapVersion() throws -> MapVersion? {
        try meta(.mapVersion).map { MapVersion($0) }
    }

    /// The `meta` row `key`, nil when absent.
    private func meta(_ key: CacheSchema.MetaKey) throws -> String? {
        try db.firstRow("SELECT value FROM meta WHERE key = ?", [.text(key.rawValue)])?["value", as: String.self]
    }

    /// Sets the `meta` row `key`.
    private func setMeta(_ key: CacheSchema.MetaKey, _ value: String) throws {
        try db.query("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", [.text(key.rawValue), .text(value)])
    }

    /// Removes every entry but those of the regions `keeping` (whose data the new version left
    /// unchanged) and stamps the cache with `mapVersion`, in one transaction, so the cache never serves
    /// data of a version older than the store's after an update. Returns what it removed and kept.
    func reset(mapVersion: MapVersion, keeping: Set<RegionID> = []) throws -> CacheReset {
        try db.transaction {
            let before = try (entries: count(), bytes: size())
            try db.execute("CREATE TEMP TABLE IF NOT EXISTS kept_regions (region TEXT PRIMARY KEY); DELETE FROM kept_regions;")
            try db.executeMany("INSERT OR IGNORE INTO kept_regions(region) VALUES (?)", keeping.map { [.text($0.rawValue)] })
            try db.execute("DELETE FROM entries WHERE region = '' OR region NOT IN (SELECT region FROM kept_regions)")
            try db.execute("DROP TABLE kept_regions")
            try setMeta(.mapVersion, mapVersion.rawValue)
            // A kept region's bundles are the same in the new version; a dropped one's record goes.
            try setMeta(.bundles, CacheSchema.encodeBundles(try regionBundles().filter { keeping.contains($0.key) }.mapValues { Array($0) }))
            let kept = try (entries: count(), bytes: size())
            return CacheReset(
                removedEntries: before.entries - kept.entries, removedBytes: before.bytes - kept.bytes, mapVersion: mapVersion,
                keptEntries: kept.entries, keptBytes: kept.bytes)
        }
    }

    /// The tables a seed's reads touch.
    private static let seedTables = ["entries", "meta"]

    /// Opens the seed at `seed` for reading by `UntrustedDatabase`'s rules, a seed being a file
    /// from an image (input from outside, vouched for by an unsigned manifest at most): its schema
    /// untrusted, `entries` and `meta` plain tables. Returns it with the work limit its reads share.
    private static func openSeed(_ seed: String) throws -> (database: SQLiteDatabase, workLimit: Int64) {
        let database: SQLiteDatabase
        let bytes: Int64
        do {
            database = try UntrustedDatabase.open(path: seed)
            bytes = try FileSystem.status(seed)?.size ?? 0
        } catch {
            throw MapStoreError.invalidCacheSeed(path: seed, reason: "\(error)")
        }
        let workLimit = UntrustedDatabase.workLimit(bytes: bytes)
        try readingSeed(seed, database, workLimit: workLimit) { try checkSeedSchema(seed, database) }
        return (database, workLimit)
    }

    /// Refuses a seed whose `entries` or `meta` is not a plain table (of the database attached to
    /// `database` as `schema`).
    private static func checkSeedSchema(_ seed: String, _ database: SQLiteDatabase, schema: String = "main") throws {
        for table in seedTables {
            if let refusal = try UntrustedDatabase.refusal(of: table, in: database, schema: schema) {
                throw MapStoreError.invalidCacheSeed(path: seed, reason: refusal + ", which would run SQL of the seed's choosing")
            }
        }
    }

    /// Runs `body`, reads of `seed` through `database`, under `workLimit`; every failure but the
    /// store's own errors becomes `invalidCacheSeed` naming the seed.
    private static func readingSeed<T>(_ seed: String, _ database: SQLiteDatabase, workLimit: Int64, _ body: () throws -> T) throws -> T {
        do {
            return try database.withWorkLimit(steps: workLimit, body)
        } catch let error as MapStoreError {
            throw error
        } catch let error as SQLiteWorkLimitError {
            throw overLimit(seed, error, workLimit: workLimit)
        } catch {
            throw MapStoreError.invalidCacheSeed(path: seed, reason: "\(error)")
        }
    }

    /// The refusal of a seed whose reads ran past `workLimit`.
    private static func overLimit(_ seed: String, _ error: SQLiteWorkLimitError, workLimit: Int64) -> MapStoreError {
        .invalidCacheSeed(
            path: seed,
            reason:
                "reading it took more than \(error.steps) SQLite steps, far more than a seed of \(UntrustedDatabase.bytes(ofWorkLimit: workLimit)) bytes needs"
        )
    }

    /// Checks a seed's format and map version without importing it.
    static func seedVersion(at seed: String) throws -> MapVersion {
        let (reader, workLimit) = try openSeed(seed)
        let values = try readingSeed(seed, reader, workLimit: workLimit) { () throws -> [CacheSchema.MetaKey: String] in
            var values: [CacheSchema.MetaKey: String] = [:]
            for row in try reader.query("SELECT key, value FROM meta") {
                if let key = try row["key", as: String?.self].flatMap(CacheSchema.MetaKey.init), let value = try row["value", as: String?.self] {
                    values[key] = value
                }
            }
            return values
        }
        do { try FormatTagError.check(values[.format], expected: CacheSchema.formatTag) } catch {
            throw MapStoreError.invalidCacheSeed(path: seed, reason: error.description)
        }
        guard let version = values[.mapVersion] else { throw MapStoreError.invalidCacheSeed(path: seed, reason: "no mapVersion in meta") }
        return MapVersion(version)
    }

    /// Checks a seed's tables and rows before they are imported: `entries` and `meta` plain tables,
    /// no negative size, every size the length of its data (the LRU sums sizes), and with `entries`
    /// exactly that many rows.
    static func checkSeedRows(at seed: String, entries: Int?) throws {
        let (reader, workLimit) = try openSeed(seed)
        let (rows, bad) = try readingSeed(seed, reader, workLimit: workLimit) { () throws -> (Int64, Int64) in
            let counts = try reader.firstRow("SELECT COUNT(*) AS count, COALESCE(SUM(size < 0 OR size != length(data)), 0) AS bad FROM entries")
            return (try counts?["count", as: Int64.self] ?? 0, try counts?["bad", as: Int64.self] ?? 0)
        }
        if bad > 0 {
            throw MapStoreError.invalidCacheSeed(
                path: seed, reason: "\(bad) of its \(rows) entries have a negative size or a size other than their data's length")
        }
        if let entries, rows != Int64(entries) {
            throw MapStoreError.invalidCacheSeed(path: seed, reason: "it holds \(rows) entries, the manifest says \(entries)")
        }
    }

    /// Imports every entry of `seed` in one transaction, ranked below everything already cached
    /// (a seed is older than anything the app has used), then evicts. Returns the entries imported.
    /// The attached seed is read by the rules `openSeed` applies, checked again once attached: the
    /// file could have changed since.
    func importSeed(_ seed: String, storeVersion: MapVersion?) throws -> Int {
        let version = try MapCache.seedVersion(at: seed)
        if let storeVersion, version < storeVersion { throw MapStoreError.seedOlderThanStore(seed: version, store: storeVersion) }
        try MapCache.checkSeedRows(at: seed, entries: nil)
        let workLimit = UntrustedDatabase.workLimit(bytes: (try? FileSystem.status(seed)?.size) ?? 0)
        try db.execute("PRAGMA trusted_schema = OFF")
        try db.query("ATTACH DATABASE ? AS seed", [.text(seed)])
        defer { try? db.execute("DETACH DATABASE seed") }
        let imported: Int
        do {
            // The cache's own failures (a full disk) stay what they are; only the limit names the seed.
            imported = try db.withWorkLimit(steps: workLimit) {
                try db.transaction { () throws -> Int in
                    try MapCache.checkSeedSchema(seed, db, schema: "seed")
                    let low = try db.firstRow("SELECT COALESCE(MIN(accessed), 0) AS low FROM main.entries")?["low", as: Int64.self] ?? 0
                    let top = try db.firstRow("SELECT COALESCE(MAX(accessed), 0) AS top FROM seed.entries")?["top", as: Int64.self] ?? 0
                    try db.query(
                        """
                        INSERT OR IGNORE INTO main.entries(key, region, data, size, sha256, accessed)
                        SELECT key, region, data, size, sha256, accessed - ? + ? FROM seed.entries
                        """, [.integer(top), .integer(low - 1)])
                    let count = db.changes
                    try db.query(
                        "INSERT OR REPLACE INTO main.meta(key, value) VALUES (?, ?)",
                        [.text(CacheSchema.MetaKey.mapVersion.rawValue), .text(version.rawValue)])
                    // Which bundles the seeded regions' entries came from, merged with what is recorded.
                    let seeded = try db.firstRow("SELECT value FROM seed.meta WHERE key = ?", [.text(CacheSchema.MetaKey.bundles.rawValue)])?[
                        "value", as: String?.self]
                    if let seeded {
                        var recorded = try regionBundles()
                        for (region, bundles) in CacheSchema.decodeBundles(seeded) { recorded[region] = bundles }
                        try setMeta(.bundles, CacheSchema.encodeBundles(recorded.mapValues { Array($0) }))
                    }
                    CrashPoint.reach("cache.midImport")
                    return count
                }
            }
        } catch let error as SQLiteWorkLimitError {
            throw MapCache.overLimit(seed, error, workLimit: workLimit)
        }
        try evict()
        // synchronous=NORMAL leaves a WAL commit unsynced until a checkpoint, which otherwise comes
        // only when the last connection closes: a power cut after `install` returned could take the
        // seed back. A checkpoint syncs the WAL and the database file.
        try db.execute("PRAGMA wal_checkpoint(FULL)")
        return imported
    }
}
