import Foundation
import MapFormat

/// `catalog.json.timestamp`: signing it, and the checks a device or build makes before it lets the
/// timestamp decide whether the catalog is fetched at all (TUF's timestamp role: signature, lineage,
/// epoch, no rollback of the catalog it names, no replay of an older timestamp, not expired).
extension CatalogTrust {
    /// The `catalog.json.timestamp` bytes naming `catalogBytes` (and its compressed form), signed with
    /// the private key text read from `path`.
    package static func signTimestamp(
        catalogBytes: Data, compressed: Data?, catalog: String, version: Int64, epoch: Int64?, timestampVersion: Int64, expires: Date,
        privateKey: String, path: String
    ) throws(SignatureError) -> Data {
        let publicKey = try Ed25519.publicKey(ofPrivate: privateKey, path: path)
        var record = CatalogTimestamp(
            catalog: catalog, version: version, epoch: epoch, timestampVersion: timestampVersion, expires: CatalogSignature.timestamp(expires),
            sha256: SHA256.digest(catalogBytes), size: Int64(catalogBytes.count), zstSHA256: compressed.map { SHA256.hex($0) },
            zstSize: compressed.map { Int64($0.count) }, keyID: try keyID(publicKey: publicKey, path: path))
        do {
            record.signature = try Ed25519.sign(try record.signedBytes, privateKey: privateKey, path: path).base64EncodedString()
            return try CanonicalJSON.encode(record)
        } catch let error as SignatureError { throw error } catch {
            throw .malformedKey(path: path, reason: "cannot encode the timestamp: \(error)")
        }
    }

    /// Trusts the timestamp `bytes` from `source`, or says why not. `trusted`, `seen` and `lineage` are
    /// those of `check`. Checks, in order: signature by a trusted key (or one a seen catalog named),
    /// lineage, epoch, the catalog version it names against the newest seen (stale) and, for the same
    /// version, its SHA-256 (mismatch), its own counter against the newest timestamp seen (replayed),
    /// then expiry. A higher epoch passes here: its catalog's cosignature is checked with the catalog.
    package static func checkTimestamp(
        _ bytes: Data, source: String, trusted: [TrustedKey], seen: SeenCatalog?, lineage: String?, now: Date
    ) throws(CatalogTrustError) -> CatalogTimestamp {
        let record = try CatalogTimestamp.parse(bytes, source: source)
        if let following = lineage ?? seen?.catalog, following != record.catalog {
            throw .otherLineage(following: following, offered: record.catalog)
        }
        var keys: [(id: String, key: TrustedKey)] = []
        for key in trusted + (seen?.keys ?? []).map({ TrustedKey(path: "a key named by an earlier catalog", text: $0) }) {
            do { keys.append((try keyID(publicKey: key.text, path: key.path), key)) } catch { throw .signatureInvalid(reason: error.description) }
        }
        guard let raw = Data(base64Encoded: record.signature), let signed = try? record.signedBytes else {
            throw .signatureInvalid(reason: "\(source): the signature field is not base64")
        }
        let verified = keys.contains { candidate in
            candidate.id == record.keyID
                && (try? Ed25519.verify(signed, signature: raw, publicKey: candidate.key.text, path: candidate.key.path)) == true
        }
        guard verified else {
            throw .signatureInvalid(reason: "\(source): not signed by a trusted key (key \(record.keyID)), or a field was edited after signing")
        }
        if let seen {
            if record.lineageEpoch < seen.epoch {
                throw .epochResetUnproven(
                    reason: "\(source) names epoch \(record.lineageEpoch), below epoch \(seen.epoch) seen before (a replayed timestamp)")
            }
            if record.lineageEpoch == seen.epoch {
                if record.version < seen.version { throw .timestampStale(seen: seen.version, offered: record.version) }
                if record.version == seen.version && record.sha256 != seen.sha256 {
                    throw .timestampMismatch(
                        reason:
                            "it names version \(record.version), seen before, with sha256 \(record.sha256.hex.prefix(16))… instead of \(seen.sha256.hex.prefix(16))…"
                    )
                }
            }
            if record.timestampVersion < seen.timestampVersion {
                throw .timestampReplayed(seen: seen.timestampVersion, offered: record.timestampVersion)
            }
        }
        if let expiry = record.expiryDate, now > expiry { throw .timestampExpired(expires: record.expires) }
        return record
    }

    /// Refuses catalog bytes that are not the ones `timestamp` names.
    package static func checkNamed(_ catalogBytes: Data, by timestamp: CatalogTimestamp) throws(CatalogTrustError) {
        guard Int64(catalogBytes.count) == timestamp.size else {
            throw .timestampMismatch(reason: "the catalog is \(catalogBytes.count) bytes, the timestamp names \(timestamp.size)")
        }
        let actual = SHA256.digest(catalogBytes)
        guard actual == timestamp.sha256 else {
            throw .timestampMismatch(
                reason: "the catalog's sha256 is \(actual.hex.prefix(16))…, the timestamp names \(timestamp.sha256.hex.prefix(16))…")
        }
    }
}
