import MapFormat

/// What a device or build machine remembers of the newest catalog it trusted.
package struct SeenCatalog: Sendable, Equatable {
    /// Its signature's version.
    package var version: Int64
    /// SHA-256 of its bytes.
    package var sha256: SHA256Digest
    /// Public key texts it brought into trust: its signer and the next key it named (key rotation).
    package var keys: [String]
    /// The signed catalog id: the lineage followed from then on (nil: remembered before lineages were pinned).
    package var catalog: String?
    /// The signature's epoch (0 before any reset of the version counter).
    package var epoch: Int64
    /// The newest `catalog.json.timestamp` counter accepted (0 before any): an older one is a replay.
    package var timestampVersion: Int64 = 0

    package init(version: Int64, sha256: SHA256Digest, keys: [String], catalog: String? = nil, epoch: Int64 = 0, timestampVersion: Int64 = 0) {
        self.timestampVersion = timestampVersion
        self.version = version
        self.sha256 = sha256
        self.keys = keys
        self.catalog = catalog
        self.epoch = epoch
    }
}
