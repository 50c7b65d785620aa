/// What a device or build machine remembers of the newest catalog it trusted.
package struct SeenCatalog: Sendable, Equatable {
    /// Its signature's version.
    package var version: Int64
    /// Hex SHA-256 of its bytes.
    package var sha256: String
    /// Public key texts it brought into trust: its signer and the next key it named (key rotation).
    package var keys: [String]

    package init(version: Int64, sha256: String, keys: [String]) {
        self.version = version
        self.sha256 = sha256
        self.keys = keys
    }
}
