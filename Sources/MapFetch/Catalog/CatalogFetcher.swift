import Foundation
import MapFormat
import MapIO

/// Why a catalog (or its signature or timestamp) could not be fetched.
package enum CatalogFetchError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No catalog at the URL (no file, HTTP 404 or 410).
    case missing(url: URL)
    /// A document could not be fetched, or is larger than its cap.
    case fetch(DocumentFetchError)
    /// `catalog.json.zst` is not a zstd stream, or decompresses to more than the timestamp's size (a bomb).
    case undecodable(url: URL, reason: String)
    /// The timestamp was refused, or the catalog is not the one it names.
    case refused(url: URL, CatalogTrustError)

    /// What went wrong, without the URL.
    package var reason: String {
        switch self {
        case .missing: "no catalog there"
        case .fetch(let error): error.description
        case .undecodable(_, let reason): "cannot decompress it: \(reason)"
        case .refused(_, .timestampMismatch(let reason)): reason
        case .refused(_, let error): error.description
        }
    }

    package var description: String {
        switch self {
        case .missing(let url): "\(url.shown): no catalog there (HTTP 404, or no such file); check the URL, or publish one"
        case .fetch(let error): error.description
        case .undecodable(let url, let reason):
            "\(url.shown): cannot decompress the catalog: \(reason); the server sends a damaged or hostile catalog.json.zst"
        case .refused(let url, let error): "\(url.shown): \(error)"
        }
    }
}

/// A catalog as fetched: the bytes (plain, whatever travelled), its signature and its timestamp.
package struct FetchedCatalog: Sendable {
    /// The exact `catalog.json` bytes every hash and signature is over.
    package var bytes: Data
    /// `catalog.json.sig`, nil when the server has none.
    package var signature: Data?
    /// `catalog.json.timestamp` as the caller's `vet` accepted it; nil when there is none.
    package var timestamp: CatalogTimestamp?
    /// True when the catalog came from the cache because the timestamp (or a `304`) said it is current.
    package var reused: Bool
}

/// Fetches a catalog the cheap way (issue 33): the small signed `catalog.json.timestamp` first,
/// conditionally (`If-None-Match` / `If-Modified-Since`); the catalog only when the timestamp names
/// one not in the cache, and then its `.zst` (the hashes stay over the plain bytes, and decompression
/// stops at the size the timestamp names, so a small download cannot expand into a bomb). Without a
/// timestamp, a signed fetch takes the signature first and the `.zst` only as the bytes whose SHA-256
/// the signature names (a kept catalog with that digest costs no request at all); a `.zst` that
/// decodes to other bytes (stale beside an edited, re-signed catalog) is set aside, `noted`, and the
/// plain catalog fetched. An unsigned catalog without a timestamp is fetched plain, conditionally,
/// offering `Content-Encoding`: nothing the server holds binds a `.zst` to it (a stale `.zst` beside
/// an edited catalog would be built from; `Last-Modified` has a resolution of a second). Trust stays
/// with the caller: `vet` checks the timestamp before it decides anything, and the caller checks the
/// catalog's signature after.
package struct CatalogFetcher: Sendable {
    /// Where fetched catalogs are kept between checks (`CatalogFetchCache`); nil keeps nothing.
    package var cacheRoot: String?
    /// The largest catalog accepted, decompressed.
    package var limit: Int
    /// Asked during every transfer (about once a second, and before each body chunk); true ends it,
    /// as when the caller's task is cancelled.
    package var stop: (@Sendable () -> Bool)?
    /// The client every GET goes through (its headers carry credentials); one attempt by default.
    package var client = FetchClient()
    /// Told the bytes of the catalog (or its `.zst`) received so far as they arrive, with the URL they
    /// come from, for a progress line (a 3.6 MB catalog takes seconds on a slow link).
    package var received: (@Sendable (_ source: String, _ bytes: Int64) -> Void)?
    /// Told why a `catalog.json.zst` the server offers was not used (it is not the signed catalog),
    /// for a warning: the catalog is then fetched plain.
    package var noted: (@Sendable (_ message: String) -> Void)?
    /// When true, a `.zst` that is not the one the timestamp names (damaged on a mirror: other bytes,
    /// cut short, empty, not zstd) is set aside as a missing one is, `noted`, and the plain catalog
    /// fetched and checked against the timestamp instead; when false (a device) it is refused.
    package var fallsBackFromDamagedZst = false

    package init(cacheRoot: String?, limit: Int) {
        self.cacheRoot = cacheRoot
        self.limit = limit
    }

    /// `received` for the document at `source`, nil when nobody listens.
    private func receiving(_ source: String) -> ((Int64) -> Void)? {
        guard let received else { return nil }
        return { bytes in received(source, bytes) }
    }

    /// The catalog at `url`, and its signature when `signed` (without trusted keys none is fetched).
    /// `vet` trusts or refuses the timestamp's bytes (`source` names it); it returns nil to ignore a
    /// timestamp (a device without trusted keys ignores a malformed one). With `timestampRequired` (the
    /// caller has trusted timestamps of this lineage before), a missing timestamp is refused
    /// (`timestampMissing`) before anything else is fetched: deleting it must not freeze a device on
    /// the signature's longer expiry (issue 41).
    package func fetch(
        _ url: URL, signed: Bool, timestampRequired: Bool = false,
        vet: (_ bytes: Data, _ source: String) throws(CatalogTrustError) -> CatalogTimestamp?
    ) throws(CatalogFetchError) -> FetchedCatalog {
        let cache = url.isFileURL ? nil : cacheRoot.map { CatalogFetchCache(root: $0, url: url) }
        var record = cache?.record() ?? CatalogFetchCache.Record()
        let recorded = record
        var kept: [CatalogFetchCache.Document: Data?] = [:]
        // Documents whose bytes came over the wire (not a `304`'s kept copy): only these, a changed
        // record or a document gone make the cache be written again.
        var fresh: Set<CatalogFetchCache.Document> = []
        let timestampURL = CatalogTimestamp.url(beside: url)
        let timestampSource = timestampURL.shown
        let timestampBytes = try document(
            .timestamp, at: timestampURL, limit: CatalogTimestamp.maxBytes, cache: cache, record: &record, fresh: &fresh)
        if timestampBytes == nil && timestampRequired { throw .refused(url: timestampURL, .timestampMissing) }
        let timestamp: CatalogTimestamp?
        do { timestamp = try timestampBytes.flatMap { bytes throws(CatalogTrustError) in try vet(bytes, timestampSource) } } catch {
            throw .refused(url: timestampURL, error)
        }
        kept[.timestamp] = timestampBytes
        guard let timestamp else {
            // An old server (or an ignored timestamp). Signed: the signature first, and the bytes it names
            // from the cache or the `.zst` when they are there. Else (or when they are not) the catalog
            // itself, conditionally; an unsigned catalog's `.zst` is never taken: nothing binds it to the
            // plain bytes, and a stale one beside an edited catalog would be built from.
            let signature =
                signed
                ? try document(
                    .signature, at: CatalogSignature.url(beside: url), limit: CatalogSignature.maxBytes, cache: cache, record: &record,
                    fresh: &fresh)
                : nil
            let named = signature.flatMap { try? CatalogSignature.parse($0, source: CatalogSignature.url(beside: url).shown).sha256 }
            var bytes: Data?
            if let named {
                if let cache, let keptBytes = cache.read(.catalog, limit: limit), SHA256.digest(keptBytes) == named {
                    bytes = keptBytes
                } else if let compressed = try compressedNamed(by: named, url: url) {
                    bytes = compressed
                    record.validators[CatalogFetchCache.Document.catalog.rawValue] = nil
                    fresh.insert(.catalog)
                }
            }
            if bytes == nil {
                bytes = try document(.catalog, at: url, limit: limit, acceptEncoding: true, cache: cache, record: &record, fresh: &fresh)
            }
            guard let bytes else { throw .missing(url: url) }
            kept[.catalog] = bytes
            kept[.signature] = signature
            record.catalogVersion = nil
            cache?.store(kept, record: record, unlessUnchangedFrom: recorded, fresh: fresh)
            return FetchedCatalog(bytes: bytes, signature: signature, timestamp: nil, reused: false)
        }
        if let cache, record.catalogVersion == timestamp.version, let bytes = cache.read(.catalog, limit: limit),
            (try? CatalogTrust.checkNamed(bytes, by: timestamp)) != nil
        {
            // A catalog kept without its signature (fetched without trusted keys) gets it now.
            var signature = signed ? cache.read(.signature, limit: CatalogSignature.maxBytes) : nil
            if signed && signature == nil {
                signature = try document(
                    .signature, at: CatalogSignature.url(beside: url), limit: CatalogSignature.maxBytes, cache: nil, record: &record,
                    fresh: &fresh)
            }
            if signed { kept[.signature] = signature }
            cache.store(kept, record: record, unlessUnchangedFrom: recorded, fresh: fresh)
            return FetchedCatalog(bytes: bytes, signature: signature, timestamp: timestamp, reused: true)
        }
        let bytes = try fetchNamed(by: timestamp, url: url)
        let signatureURL = CatalogSignature.url(beside: url)
        record.validators[CatalogFetchCache.Document.signature.rawValue] = nil
        let signature =
            signed
            ? try document(.signature, at: signatureURL, limit: CatalogSignature.maxBytes, cache: nil, record: &record, fresh: &fresh) : nil
        record.validators[CatalogFetchCache.Document.catalog.rawValue] = nil
        record.catalogVersion = timestamp.version
        kept[.catalog] = bytes
        kept[.signature] = signature
        fresh.insert(.catalog)
        cache?.store(kept, record: record, unlessUnchangedFrom: recorded, fresh: fresh)
        return FetchedCatalog(bytes: bytes, signature: signature, timestamp: timestamp, reused: false)
    }

    /// The catalog `timestamp` names: its `.zst` when it names one (checked, then decompressed up to
    /// the named size), else the plain catalog; refused unless its SHA-256 and size are the named ones.
    private func fetchNamed(by timestamp: CatalogTimestamp, url: URL) throws(CatalogFetchError) -> Data {
        let name = url.shown
        guard timestamp.size <= Int64(limit) else { throw .fetch(.tooLarge(url: url, limit: limit)) }
        var bytes: Data?
        if let zstSHA256 = timestamp.zstSHA256, let zstSize = timestamp.zstSize {
            let zstURL = CatalogTimestamp.compressedURL(beside: url)
            let zstName = zstURL.shown
            // A `.zst` that is not the one the timestamp names, set aside: the plain catalog is fetched instead.
            let setAside = { (refusal: CatalogFetchError) in
                noted?("\(zstName) is not the catalog.json.zst the timestamp names (\(refusal.reason)); fetching \(name) instead")
            }
            do {
                if case .body(let compressed, _) = try DocumentFetch.get(
                    zstURL, limit: Int(min(zstSize, Int64(limit))), stop: stop, client: client, received: receiving(zstName))
                {
                    guard SHA256.hex(compressed) == zstSHA256 else {
                        throw CatalogFetchError.refused(
                            url: zstURL,
                            .timestampMismatch(reason: "catalog.json.zst's sha256 is not the \(zstSHA256.prefix(16))… the timestamp names"))
                    }
                    do { bytes = try Zstd.decompress(compressed, limit: Int(timestamp.size)) } catch {
                        throw CatalogFetchError.undecodable(url: zstURL, reason: "\(error)")
                    }
                }
            } catch let error as CatalogFetchError {
                guard fallsBackFromDamagedZst else { throw error }
                setAside(error)
            } catch let error as DocumentFetchError {
                if case .tooLarge = error {
                    let refusal = CatalogFetchError.refused(
                        url: zstURL, .timestampMismatch(reason: "catalog.json.zst is larger than the \(zstSize) bytes the timestamp names"))
                    guard fallsBackFromDamagedZst else { throw refusal }
                    setAside(refusal)
                } else if fallsBackFromDamagedZst, case .failed(_, let status?, _) = error, (400..<500).contains(status) {
                    // Refused for good (a server or CDN that serves no .zst: 403, 401, …), not down:
                    // the plain catalog may still come.
                    noted?("\(zstName): HTTP status \(status); fetching \(name) instead")
                } else {
                    throw .fetch(error)
                }
            } catch { throw .undecodable(url: zstURL, reason: "\(error)") }
        }
        if bytes == nil {
            do {
                switch try DocumentFetch.get(
                    url, limit: Int(timestamp.size), acceptEncoding: true, stop: stop, client: client, received: receiving(name))
                {
                case .body(let data, _): bytes = data
                case .notModified, .missing: throw CatalogFetchError.missing(url: url)
                }
            } catch let error as CatalogFetchError { throw error } catch let error as DocumentFetchError {
                if case .tooLarge = error {
                    throw .refused(
                        url: url, .timestampMismatch(reason: "the catalog is larger than the \(timestamp.size) bytes the timestamp names"))
                }
                throw .fetch(error)
            } catch { throw .fetch(.failed(url: url, httpStatus: nil, reason: "\(error)")) }
        }
        guard let bytes else { throw .missing(url: url) }
        do { try CatalogTrust.checkNamed(bytes, by: timestamp) } catch { throw .refused(url: url, error) }
        return bytes
    }

    /// The catalog beside `url` decompressed from its `catalog.json.zst` (at most `limit` bytes), when
    /// that decodes to the bytes whose SHA-256 is `named` (a signature's); nil when there is no `.zst`
    /// (HTTP only), it does not decode, or it decodes to other bytes (`noted`): the caller then fetches
    /// the plain catalog. A transfer that fails is an error, after the client's retries, as for the
    /// plain catalog.
    private func compressedNamed(by named: SHA256Digest, url: URL) throws(CatalogFetchError) -> Data? {
        guard !url.isFileURL else { return nil }
        let zstURL = CatalogTimestamp.compressedURL(beside: url)
        let zstName = zstURL.shown
        let response: DocumentFetch.Response
        do { response = try DocumentFetch.get(zstURL, limit: limit, stop: stop, client: client, received: receiving(zstName)) } catch {
            // Larger than a catalog may be: not the signed catalog's.
            if case .tooLarge = error {
                noted?("\(zstName): larger than \(limit) bytes; fetching \(url.shown) instead")
                return nil
            }
            throw .fetch(error)
        }
        guard case .body(let compressed, _) = response else { return nil }
        let bytes: Data
        do { bytes = try Zstd.decompress(compressed, limit: limit) } catch {
            noted?("\(zstName): not a zstd catalog (\(error)); fetching \(url.shown) instead")
            return nil
        }
        guard SHA256.digest(bytes) == named else {
            noted?(
                "\(zstName) is not the catalog \(CatalogSignature.fileName) signs (a stale copy beside an edited catalog?); "
                    + "fetching \(url.shown) instead. Publish again to write both, or remove the .zst")
            return nil
        }
        return bytes
    }

    /// `document` at `url`: conditionally when the cache has it and its validators (a `304` gives the
    /// kept bytes), else plainly; nil when there is none. The new validators go into `record`, and
    /// `document` into `fresh` when a body came.
    private func document(
        _ document: CatalogFetchCache.Document, at url: URL, limit: Int, acceptEncoding: Bool = false, cache: CatalogFetchCache?,
        record: inout CatalogFetchCache.Record, fresh: inout Set<CatalogFetchCache.Document>
    ) throws(CatalogFetchError) -> Data? {
        let key = document.rawValue
        var keptBytes = record.validators[key] == nil ? nil : cache?.read(document, limit: limit)
        let response: DocumentFetch.Response
        do {
            response = try DocumentFetch.get(
                url, limit: limit, validators: keptBytes == nil ? nil : record.validators[key], acceptEncoding: acceptEncoding, stop: stop,
                client: client, received: document == .catalog ? receiving(url.shown) : nil)
        } catch {
            // A server that refuses the validators it gave (a request head it finds too large or
            // malformed: 400 forever after) gets one request without them; they are forgotten.
            guard keptBytes != nil, case .failed = error, stop?() != true else { throw .fetch(error) }
            keptBytes = nil
            record.validators[key] = nil
            do {
                response = try DocumentFetch.get(
                    url, limit: limit, acceptEncoding: acceptEncoding, stop: stop, client: client,
                    received: document == .catalog ? receiving(url.shown) : nil)
            } catch { throw .fetch(error) }
        }
        switch response {
        case .body(let data, let validators):
            record.validators[key] = validators
            fresh.insert(document)
            return data
        case .notModified:
            return keptBytes
        case .missing:
            record.validators[key] = nil
            return nil
        }
    }
}
