import Foundation
import MapFormat

/// Signs catalogs and decides whether to trust one: signature by a trusted key over the exact bytes,
/// no rollback, no mix-and-match, not expired (the checks of a TUF client on timestamp/targets).
package enum CatalogTrust {
    /// The key id of a public key text: the first 16 hex digits of the SHA-256 of its raw bytes.
    package static func keyID(publicKey text: String, path: String) throws(SignatureError) -> String {
        String(SHA256.hex(Data(try Ed25519.rawPublicKey(text, path: path))).prefix(16))
    }

    /// The `catalog.json.sig` bytes for `catalogBytes`, signed with the private key text read from `path`.
    /// With `reset` (a new epoch), the next key is `reset`'s public key and it cosigns the record.
    package static func sign(
        catalogBytes: Data, catalog: String, version: Int64, epoch: Int64? = nil, expires: Date, nextKey: String?,
        privateKey: String, path: String, reset: (privateKey: String, path: String)? = nil
    ) throws(SignatureError) -> Data {
        let publicKey = try Ed25519.publicKey(ofPrivate: privateKey, path: path)
        let resetPublicKey = try reset.map { key throws(SignatureError) in try Ed25519.publicKey(ofPrivate: key.privateKey, path: key.path) }
        var record = CatalogSignature(
            catalog: catalog, version: version, epoch: epoch, expires: CatalogSignature.timestamp(expires), sha256: SHA256.digest(catalogBytes),
            nextKey: resetPublicKey ?? nextKey, keyID: try keyID(publicKey: publicKey, path: path))
        do {
            let signed = try record.signedBytes
            record.signature = try Ed25519.sign(signed, privateKey: privateKey, path: path).base64EncodedString()
            if let reset, let resetPublicKey {
                record.cosignature = CatalogSignature.Cosignature(
                    keyID: try keyID(publicKey: resetPublicKey, path: reset.path),
                    signature: try Ed25519.sign(signed, privateKey: reset.privateKey, path: reset.path).base64EncodedString())
            }
            return try CanonicalJSON.encode(record)
        } catch let error as SignatureError { throw error } catch {
            throw .malformedKey(path: path, reason: "cannot encode the signature: \(error)")
        }
    }

    /// Trusts `catalogBytes` with `signature` (nil when the server had none) from `source`, or says why not.
    /// `trusted` are the configured keys; `seen` the newest catalog trusted before (its keys are trusted too).
    /// `lineage` is the catalog id followed (the installed image's, or the one pinned at first trust);
    /// a signature for another id is refused, whatever key made it. Returns what to remember from now on.
    package static func check(
        catalogBytes: Data, signature: Data?, source: String, trusted: [TrustedKey], seen: SeenCatalog?,
        lineage: String? = nil, now: Date
    ) throws(CatalogTrustError) -> SeenCatalog {
        guard let signature else { throw .unsigned }
        let record = try CatalogSignature.parse(signature, source: source)
        if let following = lineage ?? seen?.catalog, following != record.catalog {
            throw .otherLineage(following: following, offered: record.catalog)
        }
        var keys: [(id: String, key: TrustedKey)] = []
        for key in trusted + (seen?.keys ?? []).map({ TrustedKey(path: "a key named by an earlier catalog", text: $0) }) {
            do { keys.append((try keyID(publicKey: key.text, path: key.path), key)) } catch { throw .signatureInvalid(reason: error.description) }
        }
        let candidates = keys.filter { $0.id == record.keyID }
        guard !candidates.isEmpty else {
            let ids = Set(keys.map(\.id)).sorted().joined(separator: ", ")
            throw .signatureInvalid(reason: "signed by key \(record.keyID), not by a trusted key (\(ids))")
        }
        guard let raw = Data(base64Encoded: record.signature), let signed = try? record.signedBytes else {
            throw .signatureInvalid(reason: "the signature field is not base64")
        }
        var signer: TrustedKey?
        for candidate in candidates where signer == nil {
            if (try? Ed25519.verify(signed, signature: raw, publicKey: candidate.key.text, path: candidate.key.path)) == true {
                signer = candidate.key
            }
        }
        guard let signer else {
            throw .signatureInvalid(
                reason: "the signature does not match its signed fields for key \(record.keyID) (a field was edited after signing)")
        }
        let actual = SHA256.digest(catalogBytes)
        guard actual == record.sha256 else {
            throw .signatureInvalid(
                reason:
                    "the catalog's sha256 \(actual.hex.prefix(16))… is not the \(record.sha256.hex.prefix(16))… the signature names (catalog and signature from different publishes)"
            )
        }
        if let seen {
            if record.lineageEpoch < seen.epoch {
                throw .epochResetUnproven(reason: "its epoch \(record.lineageEpoch) is below epoch \(seen.epoch) seen before (a replayed catalog)")
            }
            if record.lineageEpoch == seen.epoch {
                if record.version < seen.version { throw .rollback(seen: seen.version, offered: record.version) }
                if record.version == seen.version && actual != seen.sha256 { throw .mixAndMatch(version: record.version) }
            }
        }
        if record.lineageEpoch > (seen?.epoch ?? 0) { try checkCosignature(record, signer: signer, signed: signed) }
        if let expiry = record.expiryDate, now > expiry { throw .expired(expires: record.expires) }
        var remembered = [signer.text.trimmingCharacters(in: .whitespacesAndNewlines)]
        if let next = record.nextKey {
            guard (try? Ed25519.rawPublicKey(next, path: "nextKey")) != nil else {
                throw .signatureInvalid(reason: "its nextKey is not a mappack Ed25519 public key")
            }
            remembered.append(next.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return SeenCatalog(version: record.version, sha256: actual, keys: remembered, catalog: record.catalog, epoch: record.lineageEpoch)
    }

    /// A new epoch resets the version counter: the record, signed by a trusted key, must name a
    /// different `nextKey` and carry that key's signature over the same signed fields.
    private static func checkCosignature(_ record: CatalogSignature, signer: TrustedKey, signed: Data) throws(CatalogTrustError) {
        guard let next = record.nextKey, let cosignature = record.cosignature else {
            throw .epochResetUnproven(reason: "epoch \(record.lineageEpoch) comes without a nextKey and its cosignature")
        }
        let nextKey = TrustedKey(path: "nextKey", text: next)
        guard let nextID = try? keyID(publicKey: next, path: "nextKey"), cosignature.keyID == nextID,
            nextKey.text.trimmingCharacters(in: .whitespacesAndNewlines) != signer.text.trimmingCharacters(in: .whitespacesAndNewlines)
        else { throw .epochResetUnproven(reason: "the cosignature is not by the new key the record names") }
        guard let raw = Data(base64Encoded: cosignature.signature),
            (try? Ed25519.verify(signed, signature: raw, publicKey: next, path: "nextKey")) == true
        else { throw .epochResetUnproven(reason: "the new key's cosignature does not match the signed fields") }
    }
}
