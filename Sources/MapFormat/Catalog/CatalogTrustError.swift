/// Why a catalog was not trusted (with trusted keys configured): the attacks TUF's timestamp and
/// targets roles guard against, each its own case.
public enum CatalogTrustError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No `catalog.json.sig` beside the catalog.
    case unsigned
    /// The signature file is malformed, made by a key not trusted, does not verify, or names other catalog bytes.
    case signatureInvalid(reason: String)
    /// The catalog's version is lower than the newest one seen (a replayed old catalog).
    case rollback(seen: Int64, offered: Int64)
    /// The version seen before, but other catalog bytes (two catalogs signed with one version).
    case mixAndMatch(version: Int64)
    /// The signature's expiry has passed (a frozen mirror keeps serving an old catalog).
    case expired(expires: String)
    /// The signed catalog id is not the lineage this device or recipe follows (another catalog signed by the same key).
    case otherLineage(following: String, offered: String)
    /// The signature starts a new epoch without a valid cosignature by the next key it names.
    case epochResetUnproven(reason: String)
    /// `catalog.json.timestamp` names a catalog version older than the newest seen (a stale timestamp).
    case timestampStale(seen: Int64, offered: Int64)
    /// `catalog.json.timestamp`'s own counter is below the newest timestamp seen (a replayed timestamp).
    case timestampReplayed(seen: Int64, offered: Int64)
    /// `catalog.json.timestamp`'s expiry has passed (a frozen mirror keeps serving an old timestamp).
    case timestampExpired(expires: String)
    /// The catalog served is not the one `catalog.json.timestamp` names (its SHA-256 or size), or the
    /// timestamp names the version seen before with other bytes.
    case timestampMismatch(reason: String)
    /// No `catalog.json.timestamp` (404, or a fetch that failed) although this lineage came with one
    /// before: deleting it would let a frozen mirror fall back on the signature's longer expiry.
    case timestampMissing

    public var description: String {
        switch self {
        case .unsigned:
            "the catalog is not signed (no catalog.json.sig beside it), but trusted keys are configured; publish it with `mappack publish --sign KEY`"
        case .signatureInvalid(let reason):
            "the catalog's signature is not valid: \(reason); the catalog or its catalog.json.sig was changed or replaced, or signed by a key not trusted here"
        case .rollback(let seen, let offered):
            "rollback refused: the catalog is version \(offered), older than version \(seen) seen before; the server replays an old catalog (check the mirror)"
        case .mixAndMatch(let version):
            "mix-and-match refused: the catalog is version \(version), the same version seen before but with other bytes; the publisher must give every catalog a new --catalog-version"
        case .expired(let expires):
            "the catalog's signature expired at \(expires); the server serves a stale catalog (a frozen mirror?), or this device's clock is wrong; publish a fresh signature"
        case .otherLineage(let following, let offered):
            "another catalog refused: the signature is for catalog '\(offered)', but this follows catalog '\(following)' (pinned when it was first trusted); the server swapped in another lineage signed by the same key"
        case .epochResetUnproven(let reason):
            "version reset refused: \(reason); a reset of the version counter must be signed by the old key and cosigned by the new key it names (mappack publish --reset-lineage NEW_KEY)"
        case .timestampStale(let seen, let offered):
            "stale timestamp refused: catalog.json.timestamp names catalog version \(offered), older than version \(seen) seen before; the server replays an old timestamp (check the mirror)"
        case .timestampReplayed(let seen, let offered):
            "replayed timestamp refused: catalog.json.timestamp is timestamp version \(offered), older than timestamp version \(seen) seen before; the server replays an old timestamp (check the mirror)"
        case .timestampExpired(let expires):
            "the catalog's timestamp expired at \(expires); the server serves a stale catalog.json.timestamp (a frozen mirror?), or this device's clock is wrong; publish again to sign a fresh timestamp"
        case .timestampMismatch(let reason):
            "the catalog does not match its timestamp: \(reason); the catalog and catalog.json.timestamp come from different publishes (a mirror mid-update or a mixed-up server); try again later"
        case .timestampMissing:
            "missing timestamp refused: catalog.json.timestamp is gone, but this catalog was served with one before; a server that withholds it freezes updates at an old catalog (check the mirror, or publish again)"
        }
    }
}
