import MapIO

/// The newest trusted catalog this device has seen (version, SHA-256 and the keys it brought), which
/// rollback, mix-and-match and key rotation are judged by. The `catalog_trust` table is created by the
/// first write, so stores made before signed catalogs open (and verify) unchanged.
extension StateDatabase {
    /// What was seen, nil before the first trusted catalog.
    func seenCatalog() throws -> SeenCatalog? {
        guard try db.firstRow("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'catalog_trust'") != nil,
            let row = try db.firstRow("SELECT version, sha256, keys FROM catalog_trust WHERE id = 1")
        else { return nil }
        return SeenCatalog(
            version: try row["version", as: Int64.self], sha256: try row["sha256", as: String.self],
            keys: try row["keys", as: String.self].split(separator: "\n").map(String.init))
    }

    /// Records `seen` durably (`synchronous=EXTRA`), before the catalog is used.
    func setSeenCatalog(_ seen: SeenCatalog) throws {
        try db.transaction {
            try db.execute(
                """
                CREATE TABLE IF NOT EXISTS catalog_trust (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL,
                                                          sha256 TEXT NOT NULL, keys TEXT NOT NULL);
                """)
            try db.query(
                "INSERT OR REPLACE INTO catalog_trust(id, version, sha256, keys) VALUES (1, ?, ?, ?)",
                [.integer(seen.version), .text(seen.sha256), .text(seen.keys.joined(separator: "\n"))])
        }
    }
}
