import Foundation
import MapFetch
import MapFormat
import MapIO

/// Reads and validates a `catalog.json` from a `file://` or `http(s)://` URL (MapStore cannot use
/// the build's catalog source), and its detached signature `catalog.json.sig` beside it.
enum CatalogLoader {
    /// Largest catalog accepted.
    static let maxBytes = 64 << 20

    /// The catalog at `url` through `fetcher` (timestamp first, conditional requests, `.zst`), its
    /// timestamp vetted by `vet`; fetch failures become `MapStoreError.remote` (or `.local` for a file),
    /// refusals the `MapStoreError.catalog…` cases.
    static func fetch(
        _ url: URL, with fetcher: CatalogFetcher, signed: Bool, timestampRequired: Bool = false,
        vet: (Data, String) throws(CatalogTrustError) -> CatalogTimestamp?
    ) throws(MapStoreError) -> FetchedCatalog {
        do { return try fetcher.fetch(url, signed: signed, timestampRequired: timestampRequired, vet: vet) } catch {
            switch error {
            case .missing:
                throw url.isFileURL
                    ? .local(path: url.path, errno: ENOENT, regions: [], bundle: nil, reason: "cannot read the catalog: no such file")
                    : .remote(url: url, httpStatus: 404, regions: [], bundle: nil, reason: "HTTP status 404 for the catalog")
            case .fetch(.tooLarge(let source, let limit)):
                throw .remote(url: source, httpStatus: nil, regions: [], bundle: nil, reason: "the catalog is larger than \(limit) bytes")
            case .fetch(.failed(let source, let status, let reason)):
                if url.isFileURL {
                    throw .local(path: source.shown, errno: nil, regions: [], bundle: nil, reason: "cannot read the catalog: \(reason)")
                }
                throw .remote(url: source, httpStatus: status, regions: [], bundle: nil, reason: reason)
            case .undecodable(let source, let reason): throw .invalidCatalog(url: source, reason: .compressedCopy(reason))
            case .refused(let source, let refusal): throw .catalogRefused(refusal, url: source)
            }
        }
    }

    /// Decodes and validates the bytes of the catalog at `url`.
    static func tree(_ bytes: Data, url: URL) throws -> RegionTree {
        do {
            // The build's reader: same result as `Catalog`'s Decodable, and a repeated key is refused.
            return try RegionTree(try CatalogReader.read(bytes, file: url.shown))
        } catch {
            throw MapStoreError.invalidCatalog(url: url, reason: .content("\(error)"))
        }
    }

    /// The absolute URL of a bundle whose catalog `url` is relative to the catalog's, refused by
    /// `BundleURL`'s rules (another host, a percent-encoded `..`) as in a build.
    static func bundleURL(_ relative: String, catalog: URL, bundle: BundleDigest, regions: [RegionID]) throws(MapStoreError) -> URL {
        guard let url = BundleURL.resolve(relative, catalog: catalog) else {
            throw MapStoreError.remote(
                url: catalog, httpStatus: nil, regions: regions, bundle: bundle,
                reason: CatalogError.foreignBundleURL(bundle: bundle, url: relative, catalog: catalog.shown).description)
        }
        return url
    }
}
