import MapFormat
import MapIO

/// The newest trusted catalog this device has seen (version, epoch, SHA-256, the keys it brought and
/// its catalog id, the lineage the device follows), which rollback, mix-and-match, lineage swaps and
/// key rotation are judged by. The `catalog_trust` table is created by the first write (and given the
/// lineage columns when a store made before them writes again), so older stores open unchanged.
extension StateDatabase {
    /// What was seen, nil before the first trusted catalog.
    func seenCatalog() throws -> SeenCatalog? {
        let columns = try trustColumns()
        guard !columns.isEmpty else { return nil }
        let lineage = columns.contains("catalog") ? "catalog, epoch" : "NULL AS catalog, 0 AS epoch"
        let timestamp = columns.contains("timestamp") ? "timestamp" : "0 AS timestamp"
        guard let row = try db.firstRow("SELECT version, sha256, keys, \(lineage), \(timestamp) FROM catalog_trust WHERE id = 1") else {
            return nil
        }
        let sha256 = try row["sha256", as: String.self]
        guard let digest = SHA256Digest(hex: sha256) else {
            throw MapStoreError.io(
                operation: "read the trusted catalog", path: StoreLayout.stateFileName,
                reason: "its sha256 '\(sha256)' is not 64 lower-case hex digits")
        }
        return SeenCatalog(
            version: try row["version", as: Int64.self], sha256: digest,
            keys: try row["keys", as: String.self].split(separator: "\n").map(String.init),
            catalog: try row["catalog", as: String?.self], epoch: try row["epoch", as: Int64.self],
            timestampVersion: try row["timestamp", as: Int64.self])
    }

    /// Records `seen` durably (`synchronous=EXTRA`), before the catalog is used.
    func setSeenCatalog(_ seen: SeenCatalog) throws {
        try db.transaction {
            try db.execute(
                """
                CREATE TABLE IF NOT EXISTS catalog_trust (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL,
                                                          sha256 TEXT NOT NULL, keys TEXT NOT NULL);
                """)
            if !(try trustColumns()).contains("catalog") {
                try db.execute(
                    "ALTER TABLE catalog_trust ADD COLUMN catalog TEXT; ALTER TABLE catalog_trust ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0;")
            }
            if !(try trustColumns()).contains("timestamp") {
                // The newest catalog.json.timestamp counter accepted (issue 33).
                try db.execute("ALTER TABLE catalog_trust ADD COLUMN timestamp INTEGER NOT NULL DEFAULT 0;")
            }
            try db.query(
                "INSERT OR REPLACE INTO catalog_trust(id, version, sha256, keys, catalog, epoch, timestamp) VALUES (1, ?, ?, ?, ?, ?, ?)",
                [
                    .integer(seen.version), .text(seen.sha256.hex), .text(seen.keys.joined(separator: "\n")), seen.catalog.map { .text($0) } ?? .null,
                    .integer(seen.epoch), .integer(seen.timestampVersion),
                ])
        }
    }

    /// The columns of `catalog_trust`; empty before the table exists.
    private func trustColumns() throws -> Set<String> {
        Set(try db.query("SELECT name FROM pragma_table_info('catalog_trust')").map { try $0["name", as: String.self] })
    }
}
