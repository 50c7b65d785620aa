import Foundation

/// Signed publishes of the small source fixture, one folder each, for the signed-catalog attack tests:
/// three keys (`release`, `other`, `next`) and catalogs signed at fixed versions and a fixed build clock.
///
/// | folder  | source              | key     | version | other                          |
/// |---------|---------------------|---------|---------|--------------------------------|
/// | `v1`    | fixture             | release | 1       |                                |
/// | `v2`    | fixture             | release | 2       |                                |
/// | `v2b`   | fixture, `li` changed | release | 2     | same version, other bytes      |
/// | `other` | fixture             | other   | 3       |                                |
/// | `short` | fixture             | release | 3       | expires 1 h after `signedAt`   |
/// | `rot3`  | fixture             | release | 3       | next key: `next`               |
/// | `rot4`  | fixture             | next    | 4       |                                |
/// | `beta`  | fixture, catalog id `fixture-beta` | release | 10^12 | another lineage, same key (`--force`) |
/// | `frozen`| fixture             | release | 2^53-1  | the largest version (`--force`)  |
/// | `reset` | fixture             | release | 5       | epoch 1, next key `next` cosigns (`--reset-lineage`) |
/// | `after` | fixture, `li` changed | next  | 6       | epoch 1, published over `reset`  |
/// | `dupkey`| `v2`'s catalog      | release | 2       | `"version"` twice in the signature |
/// | `ts7`   | fixture             | release | 7       | timestamp counter `signedAt`   |
/// | `ts7b`  | fixture             | release | 7       | timestamp counter `signedAt + 60` (same catalog, newer timestamp) |
/// | `ts8`   | fixture             | release | 8       | timestamp expires 1 h after `signedAt` |
/// | `ts9`   | fixture, `li` changed | release | 9     | a new version after `ts7`      |
public final class SignedCatalogSets: @unchecked Sendable {
    /// Built once per test process.
    public static let shared = SignedCatalogSets()

    public let folder = TemporaryFolder("signed-catalogs")
    /// The build clock of every publish (`SOURCE_DATE_EPOCH`): 2027-01-15T08:00:00Z.
    public static let signedAt = 1_800_000_000
    /// A device or build clock a day later, when nothing has expired (30-day default expiry).
    public static let dayLater = String(signedAt + 86_400)
    /// The published folders, served by `CatalogAttackServer(root:)`.
    public var served: String { folder.join("served") }
    /// `release.pub`, `other.pub`, `next.pub` (and `.key`).
    public func key(_ name: String) -> String { folder.join("keys/\(name)") }
    /// The text of a public key file.
    public func publicKey(_ name: String) throws -> String {
        try String(contentsOfFile: key(name) + ".pub", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private init() {
        do {
            try FileManager.default.createDirectory(atPath: folder.join("keys"), withIntermediateDirectories: true)
            for name in ["release", "other", "next"] {
                let made = try Tool.mappack(["keygen", "--out", key(name)])
                precondition(made.status == 0, made.stderr)
            }
            try SourceFixture.write(to: folder.join("source"))
            try SourceFixture.write(to: folder.join("source-b"), changed: ["li"])
            try SourceFixture.write(to: folder.join("source-beta"))
            let beta = folder.join("source-beta/source.json")
            try Data(
                try String(contentsOfFile: beta, encoding: .utf8).replacingOccurrences(
                    of: "\"catalog\":\"fixture\"", with: "\"catalog\":\"fixture-beta\""
                )
                .utf8
            ).write(to: URL(fileURLWithPath: beta))
            let sets: [(String, String, String, String, [String])] = [
                ("v1", "source", "release", "1", []), ("v2", "source", "release", "2", []), ("v2b", "source-b", "release", "2", []),
                ("other", "source", "other", "3", []), ("short", "source", "release", "3", ["--expires", "1h"]),
                ("rot3", "source", "release", "3", ["--next-key", key("next") + ".pub"]), ("rot4", "source", "next", "4", []),
                ("beta", "source-beta", "release", "1000000000000", ["--force"]), ("frozen", "source", "release", "9007199254740991", ["--force"]),
                ("reset", "source", "release", "5", ["--reset-lineage", key("next") + ".key"]), ("after", "source-b", "next", "6", []),
                ("ts7", "source", "release", "7", []), ("ts7b", "source", "release", "7", ["clock+60"]),
                ("ts8", "source", "release", "8", ["--timestamp-expires", "1h"]), ("ts9", "source-b", "release", "9", []),
            ]
            for (name, source, signer, version, extra) in sets {
                // `after` is published over `reset`'s folder, so it keeps epoch 1.
                if name == "after" { try FileManager.default.copyItem(atPath: served + "/reset", toPath: served + "/after") }
                let clock = Self.signedAt + (extra == ["clock+60"] ? 60 : 0)
                let publish = try Tool.mappack(
                    [
                        "publish", folder.join(source), "--out", served + "/" + name, "--sign", key(signer) + ".key",
                        "--catalog-version", version,
                    ] + extra.filter { $0 != "clock+60" },
                    environment: ["SOURCE_DATE_EPOCH": String(clock)])
                precondition(publish.status == 0, "publish \(name): \(publish.stderr)")
            }
            // A signature that says its version twice: readers keeping the first and the last would disagree.
            try FileManager.default.copyItem(atPath: served + "/v2", toPath: served + "/dupkey")
            let signature = served + "/dupkey/catalog.json.sig"
            let text = try String(contentsOfFile: signature, encoding: .utf8)
            precondition(text.contains("\"version\":2}"), text)
            try Data(text.replacingOccurrences(of: "\"version\":2}", with: "\"version\":2,\"version\":999}").utf8)
                .write(to: URL(fileURLWithPath: signature))
            // The same signature with its version written `2e0`: Foundation reads the integer 2, so the
            // signature still verifies; a counter written as a float must be refused (issue 41).
            try FileManager.default.copyItem(atPath: served + "/v2", toPath: served + "/exponent")
            try Data(text.replacingOccurrences(of: "\"version\":2}", with: "\"version\":2e0}").utf8)
                .write(to: URL(fileURLWithPath: served + "/exponent/catalog.json.sig"))
        } catch {
            preconditionFailure("signed catalog sets: \(error)")
        }
    }
}
