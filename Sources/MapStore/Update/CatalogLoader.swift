import Foundation
import MapFetch
import MapFormat
import MapIO

/// Reads and validates a `catalog.json` from a `file://` or `http(s)://` URL (MapStore cannot use
/// the build's catalog source).
enum CatalogLoader {
    /// Largest catalog accepted.
    static let maxBytes = 64 << 20

    /// The catalog's bytes and validated tree; remote failures become `MapStoreError.remote`.
    static func load(_ url: URL) async throws -> (tree: RegionTree, bytes: Data) {
        try await BlockingPool.run { try loadBlocking(url) }
    }

    static func loadBlocking(_ url: URL) throws -> (tree: RegionTree, bytes: Data) {
        let bytes: Data
        if url.isFileURL {
            do { bytes = try ReadableFile.contents(of: url.path, limit: maxBytes) } catch {
                throw MapStoreError.local(path: url.path, errno: nil, regions: [], bundle: nil, reason: "cannot read the catalog: \(error)")
            }
        } else {
            var body = Data()
            var tooLarge = false
            let outcome = CurlTransfer().get(url) { chunk in
                body.append(contentsOf: chunk)
                tooLarge = body.count > maxBytes
                return !tooLarge
            }
            if tooLarge { throw MapStoreError.remote(url: url.absoluteString, httpStatus: outcome.status, regions: [], bundle: nil, reason: "catalog larger than \(maxBytes) bytes") }
            if let error = outcome.error, !outcome.aborted {
                throw MapStoreError.remote(url: url.absoluteString, httpStatus: outcome.status == 0 ? nil : outcome.status, regions: [], bundle: nil, reason: error)
            }
            guard outcome.status == 200 else {
                throw MapStoreError.remote(url: url.absoluteString, httpStatus: outcome.status, regions: [], bundle: nil, reason: "HTTP status \(outcome.status) for the catalog")
            }
            bytes = body
        }
        return (try tree(bytes, source: url.absoluteString), bytes)
    }

    /// Decodes and validates catalog bytes.
    static func tree(_ bytes: Data, source: String) throws -> RegionTree {
        do {
            // The build's reader: same result as `Catalog`'s Decodable, and a repeated key is refused.
            return try RegionTree(try CatalogReader.read(bytes, file: source))
        } catch {
            throw MapStoreError.remote(url: source, httpStatus: nil, regions: [], bundle: nil, reason: "not a usable catalog: \(error)")
        }
    }

    /// The absolute URL of a bundle whose catalog `url` is relative to the catalog's, refused by
    /// `BundleURL`'s rules (another host, a percent-encoded `..`) as in a build.
    static func bundleURL(_ relative: String, catalog: URL, bundle: BundleDigest, regions: [RegionID]) throws(MapStoreError) -> URL {
        guard let url = BundleURL.resolve(relative, catalog: catalog) else {
            throw MapStoreError.remote(url: catalog.absoluteString, httpStatus: nil, regions: regions, bundle: bundle,
                                       reason: CatalogError.foreignBundleURL(bundle: bundle, url: relative, catalog: catalog.absoluteString).description)
        }
        return url
    }
}
