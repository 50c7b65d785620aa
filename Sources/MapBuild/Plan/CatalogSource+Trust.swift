import Foundation
import MapFetch
import MapFormat
import MapIO

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
    }

    /// Checks `bytes`, the catalog read from `url`, against its signature beside it, and remembers it in
    /// the ledger when it is trusted. Refusals are `LoadError.untrusted`.
    public static func verifySignature(_ bytes: Data, url: URL, trust: Trust) throws(LoadError) {
        let signatureURL = CatalogSignature.url(beside: url)
        let source = signatureURL.isFileURL ? signatureURL.path : signatureURL.absoluteString
        let name = url.isFileURL ? url.path : url.absoluteString
        let signature = try fetchSignature(signatureURL)
        do {
            // The ledger is per catalog id; the id comes from the signed fields (checked just below).
            let catalog = try signature.map { try CatalogSignature.parse($0, source: source).catalog } ?? ""
            let seen = try trust.ledger.seen(catalog: catalog)
            let accepted = try CatalogTrust.check(
                catalogBytes: bytes, signature: signature, source: source,
                trusted: trust.keys.map { TrustedKey(path: $0.path, text: $0.text) }, seen: seen, lineage: try trust.ledger.lineage(url: name),
                now: trust.now)
            try trust.ledger.pin(url: name, catalog: catalog)
            try trust.ledger.record(accepted, catalog: catalog)
        } catch let error as CatalogTrustError {
            throw .untrusted(url: name, error)
        } catch let error as LoadError {
            throw error
        } catch {
            throw .unreadable(url: name, reason: "\(error)")
        }
    }

    /// The signature's bytes; nil when there is none (no such file, HTTP 404 or 410).
    private static func fetchSignature(_ url: URL) throws(LoadError) -> Data? {
        if url.isFileURL {
            do { return try ReadableFile.contents(of: url.path, limit: CatalogSignature.maxBytes) } catch {
                if error.isNotFound { return nil }
                throw .unreadable(url: url.path, reason: error.description)
            }
        }
        var data = Data()
        var tooLarge = false
        let outcome = CurlTransfer().get(url) { chunk in
            if data.count + chunk.count > CatalogSignature.maxBytes {
                tooLarge = true
                return false
            }
            data.append(contentsOf: chunk)
            return true
        }
        if tooLarge { throw .untrusted(url: url.absoluteString, .signatureInvalid(reason: "larger than \(CatalogSignature.maxBytes) bytes")) }
        if outcome.status == 404 || outcome.status == 410 { return nil }
        if outcome.status >= 400 { throw .unreadable(url: url.absoluteString, reason: httpReason(outcome.status)) }
        if let error = outcome.error { throw .unreadable(url: url.absoluteString, reason: error) }
        return data
    }
}
