import Foundation
import MapFetch
import MapFormat
import MapIO

/// Reads and validates a `catalog.json` from a `file://` or `http(s)://` URL (MapStore cannot use
/// the build's catalog source), and its detached signature `catalog.json.sig` beside it.
enum CatalogLoader {
    /// Largest catalog accepted.
    static let maxBytes = 64 << 20

    /// The catalog's bytes and validated tree; remote failures become `MapStoreError.remote`.
    static func load(_ url: URL) async throws -> (tree: RegionTree, bytes: Data) {
        try await BlockingPool.run { try loadBlocking(url) }
    }

    /// `load` on the calling thread; a raised `cancellation` ends the fetch within about a second
    /// (`MapStoreError.cancelled`), also while the server sends nothing.
    static func loadBlocking(_ url: URL, cancellation: CancellationFlag? = nil) throws -> (tree: RegionTree, bytes: Data) {
        let bytes =
            try fetch(url, limit: maxBytes, what: "the catalog", cancellation: cancellation) ?? { throw missing(url, what: "the catalog") }()
        return (try tree(bytes, source: url.absoluteString), bytes)
    }

    /// The catalog's bytes and its signature's (nil when the server has none: 404 or no file), not decoded.
    static func fetchSigned(_ url: URL) async throws -> (catalog: Data, signature: Data?) {
        try await BlockingPool.run { try fetchSignedBlocking(url) }
    }

    static func fetchSignedBlocking(_ url: URL, cancellation: CancellationFlag? = nil) throws -> (catalog: Data, signature: Data?) {
        let catalog =
            try fetch(url, limit: maxBytes, what: "the catalog", cancellation: cancellation) ?? { throw missing(url, what: "the catalog") }()
        let signature = CatalogSignature.url(beside: url)
        return (catalog, try fetch(signature, limit: CatalogSignature.maxBytes, what: "the catalog's signature", cancellation: cancellation))
    }

    private static func missing(_ url: URL, what: String) -> MapStoreError {
        url.isFileURL
            ? .local(path: url.path, errno: ENOENT, regions: [], bundle: nil, reason: "cannot read \(what): no such file")
            : .remote(url: url.absoluteString, httpStatus: 404, regions: [], bundle: nil, reason: "HTTP status 404 for \(what)")
    }

    /// The body at `url`, at most `limit` bytes; nil when there is none (no such file, HTTP 404 or 410).
    private static func fetch(_ url: URL, limit: Int, what: String, cancellation: CancellationFlag?) throws -> Data? {
        if url.isFileURL {
            do { return try ReadableFile.contents(of: url.path, limit: limit) } catch {
                if error.isNotFound { return nil }
                throw MapStoreError.local(path: url.path, errno: nil, regions: [], bundle: nil, reason: "cannot read \(what): \(error)")
            }
        }
        var body = Data()
        var tooLarge = false
        let stop = cancellation.map { flag in { flag.isCancelled } }
        let outcome = CurlTransfer().get(url, stop: stop) { chunk in
            body.append(contentsOf: chunk)
            tooLarge = body.count > limit
            return !tooLarge
        }
        if outcome.stopped { throw MapStoreError.cancelled }
        if tooLarge {
            throw MapStoreError.remote(
                url: url.absoluteString, httpStatus: outcome.status, regions: [], bundle: nil, reason: "\(what) is larger than \(limit) bytes")
        }
        if outcome.status == 404 || outcome.status == 410 { return nil }
        if let error = outcome.error, !outcome.aborted {
            throw MapStoreError.remote(
                url: url.absoluteString, httpStatus: outcome.status == 0 ? nil : outcome.status, regions: [], bundle: nil, reason: error)
        }
        guard outcome.status == 200 else {
            throw MapStoreError.remote(
                url: url.absoluteString, httpStatus: outcome.status, regions: [], bundle: nil, reason: "HTTP status \(outcome.status) for \(what)")
        }
        return body
    }

    /// Decodes and validates catalog bytes.
    static func tree(_ bytes: Data, source: String) throws -> RegionTree {
        do {
            // The build's reader: same result as `Catalog`'s Decodable, and a repeated key is refused.
            return try RegionTree(try CatalogReader.read(bytes, file: source))
        } catch {
            throw MapStoreError.invalidCatalog(url: source, reason: "\(error)")
        }
    }

    /// The absolute URL of a bundle whose catalog `url` is relative to the catalog's, refused by
    /// `BundleURL`'s rules (another host, a percent-encoded `..`) as in a build.
    static func bundleURL(_ relative: String, catalog: URL, bundle: BundleDigest, regions: [RegionID]) throws(MapStoreError) -> URL {
        guard let url = BundleURL.resolve(relative, catalog: catalog) else {
            throw MapStoreError.remote(
                url: catalog.absoluteString, httpStatus: nil, regions: regions, bundle: bundle,
                reason: CatalogError.foreignBundleURL(bundle: bundle, url: relative, catalog: catalog.absoluteString).description)
        }
        return url
    }
}
