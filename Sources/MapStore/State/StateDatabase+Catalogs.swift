import Foundation
import MapFormat
import MapIO

/// A catalog added to the store after the image's (`MapStore.addCatalog`): a row of `added_catalogs`.
/// The image's catalog keeps its rows where stores made before several catalogs kept it (the `meta`
/// keys `catalog`, `catalogURL`, `checkedCatalogURL`, `mapVersion`, `supportedUntil`, the
/// `catalog_trust` row and `catalog.json`), so such a store opens with that one catalog unchanged.
struct AddedCatalogRow: Equatable, Sendable {
    var id: CatalogID
    /// Its place in `catalogs()` (after the image's), in the order catalogs were added.
    var position: Int64
    var url: URL
    /// The catalog the next check or update of it reads (the last checked); nil: `url`.
    var checkedURL: URL?
    /// The map version of its data on the device (of its kept copy).
    var mapVersion: MapVersion
    var supportedUntil: String?
    /// SHA-256 of its kept copy (the `kept` column), so listings parse it again only when it changed.
    var sha256: String
    /// What was trusted of it (with trusted keys), as `catalog_trust` holds for the image's catalog.
    var seen: SeenCatalog?
}

/// Several catalogs per store: the tables of the catalogs added after the image's, and which catalog
/// each installed region of those came from (a region without a row is the image catalog's). Created by
/// `makeSchema` at open (`CREATE TABLE IF NOT EXISTS`, then the `catalogsSchema` meta row), so a
/// store made before them opens unchanged; every write to them is one transaction of `state.sqlite`,
/// the commit point, and a transition's rows are written with its commit (`commitTransition`).
extension StateDatabase {
    /// The `catalogsSchema` value this library writes.
    static let catalogsSchema = "1"

    /// Creates the tables that are missing, and in an installed store records the catalogs' step in
    /// `meta`, in one transaction; does nothing (and takes no write lock) when nothing is missing. A
    /// store made before several catalogs opens with its image's catalog only. With `pending`, the
    /// transaction records it too; returns whether there was one.
    @discardableResult
    func makeSchema(marking pending: PendingOperation? = nil) throws -> Bool {
        let present = Set(try db.query("SELECT name FROM sqlite_master WHERE type = 'table'").map { try $0["name", as: String.self] })
        if present.isSuperset(of: StateDatabase.tables) {
            guard try imageID != nil, try meta(.catalogsSchema) != StateDatabase.catalogsSchema else { return false }
        }
        try db.transaction {
            try db.execute(
                """
                CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS regions (id TEXT PRIMARY KEY, parent TEXT, name TEXT NOT NULL, names TEXT NOT NULL,
                                                    bundles TEXT NOT NULL, size INTEGER NOT NULL, state TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS pending_operation (id INTEGER PRIMARY KEY CHECK (id = 1), kind TEXT NOT NULL,
                                                              detail TEXT NOT NULL, started TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS downloads (id TEXT PRIMARY KEY, state TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS added_catalogs (id TEXT PRIMARY KEY, position INTEGER NOT NULL, url TEXT NOT NULL,
                    checked_url TEXT, map_version TEXT NOT NULL, supported_until TEXT, kept BLOB NOT NULL, sha256 TEXT NOT NULL,
                    trust_version INTEGER, trust_sha256 TEXT, trust_keys TEXT, trust_epoch INTEGER, trust_timestamp INTEGER);
                CREATE TABLE IF NOT EXISTS region_catalogs (region TEXT PRIMARY KEY, catalog TEXT NOT NULL);
                """)
            // Only an installed store records it: an install's commit starts `meta` afresh.
            if try imageID != nil { try setMeta(.catalogsSchema, StateDatabase.catalogsSchema) }
            if let pending { try markPending(pending) }
        }
        return true
    }

    private func hasTable(_ name: String) throws -> Bool {
        try db.firstRow("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(name)]) != nil
    }

    /// The added catalogs, in the order they were added; empty in a store made before them.
    func addedCatalogs() throws -> [AddedCatalogRow] {
        guard try hasTable("added_catalogs") else { return [] }
        return try db.query(
            """
            SELECT id, position, url, checked_url, map_version, supported_until, sha256, trust_version, trust_sha256, trust_keys,
                   trust_epoch, trust_timestamp FROM added_catalogs ORDER BY position
            """
        ).map { row in
            var seen: SeenCatalog?
            if let version = try row["trust_version", as: Int64?.self], let hex = try row["trust_sha256", as: String?.self],
                let digest = SHA256Digest(hex: hex)
            {
                seen = SeenCatalog(
                    version: version, sha256: digest, keys: (try row["trust_keys", as: String?.self] ?? "").split(separator: "\n").map(String.init),
                    catalog: try row["id", as: String.self], epoch: try row["trust_epoch", as: Int64?.self] ?? 0,
                    timestampVersion: try row["trust_timestamp", as: Int64?.self] ?? 0)
            }
            let url = try row["url", as: String.self]
            return AddedCatalogRow(
                id: CatalogID(try row["id", as: String.self]), position: try row["position", as: Int64.self],
                url: URL(string: url) ?? URL(fileURLWithPath: url), checkedURL: try row["checked_url", as: String?.self].flatMap { URL(string: $0) },
                mapVersion: MapVersion(try row["map_version", as: String.self]),
                supportedUntil: try row["supported_until", as: String?.self].flatMap { $0.isEmpty ? nil : $0 },
                sha256: try row["sha256", as: String.self], seen: seen)
        }
    }

    /// The kept copy of the added catalog `id`.
    func addedCatalogBytes(_ id: CatalogID) throws -> Data? {
        guard try hasTable("added_catalogs") else { return nil }
        return try db.firstRow("SELECT kept FROM added_catalogs WHERE id = ?", [.text(id.rawValue)])?["kept", as: Data.self]
    }

    /// Adds catalog `id` (at `url`, version `mapVersion`, its bytes kept) after the others, with what was
    /// trusted of it and the installed regions it takes back (`adopting`); one transaction.
    func addCatalog(_ id: CatalogID, url: URL, tree: RegionTree, bytes: Data, seen: SeenCatalog?, adopting: [RegionID] = []) throws {
        try makeSchema()
        try db.transaction {
            let last = try db.firstRow("SELECT MAX(position) AS last FROM added_catalogs")?["last", as: Int64?.self] ?? 0
            try db.query(
                """
                INSERT INTO added_catalogs(id, position, url, checked_url, map_version, supported_until, kept, sha256)
                VALUES (?, ?, ?, NULL, ?, ?, ?, ?)
                """,
                [
                    .text(id.rawValue), .integer(last + 1), .text(url.absoluteString), .text(tree.catalog.mapVersion.rawValue),
                    .text(tree.catalog.supportedUntil ?? ""), .blob(bytes), .text(SHA256.hex(bytes)),
                ])
            if let seen { try setAddedSeen(id, seen) }
            try db.executeMany(
                "INSERT OR REPLACE INTO region_catalogs(region, catalog) VALUES (?, ?)", adopting.map { [.text($0.rawValue), .text(id.rawValue)] })
        }
    }

    /// Keeps `bytes` (the catalog at `url`, of the version the device holds of it) as the added catalog
    /// `id`'s copy, with its URL and support window.
    func keepAddedCatalog(_ id: CatalogID, url: URL, tree: RegionTree, bytes: Data) throws {
        try db.query(
            "UPDATE added_catalogs SET url = ?, map_version = ?, supported_until = ?, kept = ?, sha256 = ? WHERE id = ?",
            [
                .text(url.absoluteString), .text(tree.catalog.mapVersion.rawValue), .text(tree.catalog.supportedUntil ?? ""), .blob(bytes),
                .text(SHA256.hex(bytes)), .text(id.rawValue),
            ])
    }

    /// Remembers `url` as the catalog the next check or update of the added catalog `id` reads.
    func setAddedCheckedURL(_ id: CatalogID, _ url: URL) throws {
        try db.query("UPDATE added_catalogs SET checked_url = ? WHERE id = ?", [.text(url.absoluteString), .text(id.rawValue)])
    }

    /// Records what was trusted of the added catalog `id` (`synchronous=EXTRA`: on disk when it returns).
    func setAddedSeen(_ id: CatalogID, _ seen: SeenCatalog) throws {
        try db.query(
            "UPDATE added_catalogs SET trust_version = ?, trust_sha256 = ?, trust_keys = ?, trust_epoch = ?, trust_timestamp = ? WHERE id = ?",
            [
                .integer(seen.version), .text(seen.sha256.hex), .text(seen.keys.joined(separator: "\n")), .integer(seen.epoch),
                .integer(seen.timestampVersion), .text(id.rawValue),
            ])
    }

    /// Removes the added catalog `id` and its region rows; one transaction.
    func removeAddedCatalog(_ id: CatalogID) throws {
        try db.transaction {
            try db.query("DELETE FROM added_catalogs WHERE id = ?", [.text(id.rawValue)])
            try db.query("DELETE FROM region_catalogs WHERE catalog = ?", [.text(id.rawValue)])
        }
    }

    /// The added catalog of each region that came from one (regions of the image's catalog have no row).
    func regionCatalogs() throws -> [RegionID: CatalogID] {
        guard try hasTable("region_catalogs") else { return [:] }
        var out: [RegionID: CatalogID] = [:]
        for row in try db.query("SELECT region, catalog FROM region_catalogs") {
            out[RegionID(try row["region", as: String.self])] = CatalogID(try row["catalog", as: String.self])
        }
        return out
    }

    /// Inside a transaction: records `commit` (the regions of an added catalog a transition installs, and
    /// for an update its new version, URL and support window). Nothing for the image's catalog, whose
    /// rows are `meta`'s.
    func applyCatalogCommit(_ commit: CatalogCommit) throws {
        let id = CatalogID(commit.catalog)
        try db.executeMany(
            "INSERT OR REPLACE INTO region_catalogs(region, catalog) VALUES (?, ?)", commit.regions.map { [.text($0), .text(id.rawValue)] })
        if let version = commit.mapVersion, let url = commit.url {
            try db.query(
                "UPDATE added_catalogs SET map_version = ?, url = ?, checked_url = ?, supported_until = ? WHERE id = ?",
                [.text(version), .text(url), .text(url), .text(commit.supportedUntil ?? ""), .text(id.rawValue)])
        }
    }

    /// Inside a transaction: forgets the catalog rows of regions no longer installed.
    func dropRegionCatalogs(_ ids: [RegionID]) throws {
        guard try hasTable("region_catalogs") else { return }
        try db.executeMany("DELETE FROM region_catalogs WHERE region = ?", ids.map { [.text($0.rawValue)] })
    }
}

/// What a transition of an added catalog's regions records with its commit (kept in the pending row's
/// `TransitionRecord`, so a repair that finishes the switch records it too).
struct CatalogCommit: Codable, Equatable, Sendable {
    /// The added catalog's id.
    var catalog: String
    /// The regions of it the new manifest holds.
    var regions: [String]
    /// For an update: the version, URL and support window it installs.
    var mapVersion: String?
    var url: String?
    var supportedUntil: String?
}
