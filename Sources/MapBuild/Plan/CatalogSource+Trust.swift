import Foundation
import MapFetch
import MapFormat
import MapIO
import Synchronization

/// `mappack build --trust KEY`: the catalog must carry a valid `catalog.json.sig` by a trusted key (or a
/// key a trusted catalog named next), not older than the newest seen, not of a seen version with other
/// bytes, and not expired, as MapStore checks on a device.
extension CatalogSource {
    /// The keys, the ledger and the clock a trusted build checks its catalog with.
    public struct Trust: Sendable {
        /// Public key texts and the files they came from.
        public var keys: [(path: String, text: String)]
        /// Where the newest trusted version per catalog id is remembered.
        public var ledger: CatalogTrustLedger
        /// The clock expiry is judged by.
        public var now: Date

        /// A trust configuration.
        public init(keys: [(path: String, text: String)], ledger: CatalogTrustLedger, now: Date) {
            self.keys = keys
            self.ledger = ledger
            self.now = now
        }

        /// True when the ledger has trusted a `catalog.json.timestamp` of the lineage pinned at `url`:
        /// a missing one is then refused, as on a device (issue 41).
        func hadTimestamps(url: String) throws(LoadError) -> Bool {
            guard let lineage = try ledger.lineage(url: url) else { return false }
            return (try ledger.seen(catalog: lineage)?.timestampVersion ?? 0) > 0
        }

        /// Trusts `catalog.json.timestamp` (`bytes`, from `source`) for the catalog at `url` as a device
        /// does, against the ledger of the catalog id it names and the lineage pinned at `url`.
        func checkTimestamp(_ bytes: Data, source: String, url: String) throws(CatalogTrustError) -> CatalogTimestamp {
            let named = try CatalogTimestamp.parse(bytes, source: source)
            let seen: SeenCatalog?
            let lineage: String?
            do {
                seen = try ledger.seen(catalog: named.catalog)
                lineage = try ledger.lineage(url: url)
            } catch { throw .signatureInvalid(reason: error.description) }
            return try CatalogTrust.checkTimestamp(
                bytes, source: source, trusted: keys.map { TrustedKey(path: $0.path, text: $0.text) }, seen: seen, lineage: lineage, now: now)
        }
    }

    /// Checks `bytes`, the catalog read from `url`, against its signature beside it (the one `prefetch`
    /// fetched with it, else fetched now), and remembers it in the ledger when it is trusted, with the
    /// counter of the timestamp that named it. Refusals are `LoadError.untrusted`.
    public static func verifySignature(_ bytes: Data, url: URL, trust: Trust) throws(LoadError) {
        let signatureURL = CatalogSignature.url(beside: url)
        let source = signatureURL.shown
        let name = url.shown
        let kept = prefetched.withLock { $0[url] }.flatMap { $0.bytes == bytes ? $0 : nil }
        let signature: Data?
        if let kept { signature = kept.signature } else { signature = try fetchSignature(signatureURL) }
        do {
            // The ledger is per catalog id; the id comes from the signed fields (checked just below).
            let catalog = try signature.map { try CatalogSignature.parse($0, source: source).catalog } ?? ""
            let seen = try trust.ledger.seen(catalog: catalog)
            var accepted = try CatalogTrust.check(
                catalogBytes: bytes, signature: signature, source: source,
                trusted: trust.keys.map { TrustedKey(path: $0.path, text: $0.text) }, seen: seen, lineage: try trust.ledger.lineage(url: name),
                now: trust.now)
            accepted.timestampVersion = max(kept?.timestamp?.timestampVersion ?? 0, seen?.timestampVersion ?? 0)
            try trust.ledger.pin(url: name, catalog: catalog)
            try trust.ledger.record(accepted, catalog: catalog)
        } catch let error as CatalogTrustError {
            throw .untrusted(url: url, error)
        } catch let error as LoadError {
            throw error
        } catch {
            throw .unreadable(url: url, reason: "\(error)")
        }
    }

    /// The signature's bytes; nil when there is none (no such file, HTTP 404 or 410). Retried as the
    /// catalog is (a build takes it with the catalog in `prefetch`; this is for callers that did not).
    private static func fetchSignature(_ url: URL) throws(LoadError) -> Data? {
        var client = FetchClient(retry: .standard)
        client.retrying = retries.withLock { $0 }
        do {
            switch try DocumentFetch.get(url, limit: CatalogSignature.maxBytes, client: client) {
            case .body(let data, _): return data
            case .notModified, .missing: return nil
            }
        } catch {
            switch error {
            case .tooLarge(_, let limit): throw .untrusted(url: url, .signatureInvalid(reason: "larger than \(limit) bytes"))
            case .failed(_, let status, let reason):
                throw .unreadable(url: url, reason: status.map { httpReason($0) } ?? reason)
            }
        }
    }
}
