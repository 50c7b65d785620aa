import Foundation
import MapFetch
import MapFormat
import MapIO
import Synchronization

/// Loads and validates a catalog from a path or a `file://`, `http://` or `https://` URL.
public enum CatalogSource {
    /// Largest catalog file accepted.
    public static let maxBytes = 256 << 20

    /// Why a catalog could not be used.
    public enum LoadError: Error, Sendable, CustomStringConvertible {
        case unreadable(url: String, reason: String)
        case malformed(JSONFileError)
        case invalid(url: String, CatalogError)
        /// `--trust` was given and the catalog's signature does not hold (failed work: exit 1).
        case untrusted(url: String, CatalogTrustError)

        public var description: String {
            switch self {
            case .unreadable(let url, let reason): "catalog \(url): \(reason)"
            case .malformed(let error): "catalog \(error)"
            case .invalid(let url, let error): "catalog \(url): \(error)"
            case .untrusted(let url, let error): "catalog \(url): \(error)"
            }
        }
    }

    /// The catalog at `url`, validated into a region tree.
    public static func load(_ url: URL) throws(LoadError) -> RegionTree {
        try loadWithBytes(url).tree
    }

    /// The catalog at `url` and the exact bytes it was read from (those of `prefetch`, if it ran).
    public static func loadWithBytes(_ url: URL) throws(LoadError) -> (tree: RegionTree, bytes: Data) {
        let data: Data
        if let kept = prefetched.withLock({ $0.removeValue(forKey: url) }) { data = kept } else { data = try fetchBytes(url) }
        return (try decode(data, url: url), data)
    }

    /// Reads the catalog's bytes without decoding them (a no-op build needs only their hash) and
    /// keeps them for the next `loadWithBytes(url)`, so a run reads its catalog once.
    public static func prefetch(_ url: URL) throws(LoadError) -> Data {
        let data = try fetchBytes(url)
        prefetched.withLock { $0[url] = data }
        return data
    }

    private static let prefetched = Mutex<[URL: Data]>([:])

    /// Decodes and validates catalog bytes read from `url`.
    public static func decode(_ data: Data, url: URL) throws(LoadError) -> RegionTree {
        let catalog: Catalog
        do { catalog = try CatalogReader.read(data, file: url.isFileURL ? url.path : url.absoluteString) } catch {
            if let error = error as? JSONFileError {
                // A newer major with another shape should say "unknown format", not "missing field".
                if let format = Self.formatField(data), (try? FormatTagError.check(format, expected: Catalog.formatTag)) == nil {
                    throw .invalid(url: url.absoluteString, .format(.unknown(found: format, expected: Catalog.formatTag)))
                }
                throw .malformed(error)
            }
            throw .unreadable(url: url.absoluteString, reason: "\(error)")
        }
        do { return try RegionTree(catalog) } catch { throw .invalid(url: url.isFileURL ? url.path : url.absoluteString, error) }
    }

    private static func formatField(_ data: Data) -> String? {
        struct Head: Decodable { let format: String? }
        return (try? JSONDecoder().decode(Head.self, from: data))?.format
    }

    private static func fetchBytes(_ url: URL) throws(LoadError) -> Data {
        if url.isFileURL {
            do { return try ReadableFile.contents(of: url.path, limit: maxBytes) } catch {
                throw .unreadable(
                    url: url.path,
                    reason: error.code == ENOENT
                        ? "no such file; give the path or URL of a catalog.json (`mappack publish` writes one)" : error.description)
            }
        }
        var data = Data()
        var tooLarge = false
        let outcome = CurlTransfer().get(url) { chunk in
            if data.count + chunk.count > maxBytes {
                tooLarge = true
                return false
            }
            data.append(contentsOf: chunk)
            return true
        }
        if tooLarge { throw .unreadable(url: url.absoluteString, reason: "larger than \(maxBytes) bytes") }
        if outcome.status >= 400 { throw .unreadable(url: url.absoluteString, reason: httpReason(outcome.status)) }
        if let error = outcome.error { throw .unreadable(url: url.absoluteString, reason: error) }
        return data
    }

    /// What an HTTP error status means for a catalog, and what to do.
    static func httpReason(_ status: Int) -> String {
        switch status {
        case 404, 410: "HTTP status \(status) (not found); check the URL, or publish the catalog there (`mappack publish`)"
        case 401, 403: "HTTP status \(status) (access refused); check the URL and that this machine may read it"
        case 500...: "HTTP status \(status) (server error); try again later, or ask the server's operator"
        default: "HTTP status \(status); check the URL"
        }
    }
}

extension CatalogSource.LoadError {
    /// The error with the recipe line that names the catalog, for a catalog that cannot be read:
    /// the fix is often in the recipe.
    package func named(by recipe: Recipe) -> CatalogSource.LoadError {
        guard case .unreadable(let url, let reason) = self else { return self }
        let place = recipe.catalogLine > 0 ? "\(recipe.file):\(recipe.catalogLine)" : recipe.file
        return .unreadable(url: url, reason: "\(reason) (\(place): catalog: \(recipe.catalog))")
    }
}
