import Foundation
import MapFetch
import MapFormat
import MapIO
import Synchronization

/// Loads and validates a catalog from a path or a `file://`, `http://` or `https://` URL.
public enum CatalogSource {
    /// Largest catalog file accepted.
    public static let maxBytes = 256 << 20

    /// Why a catalog could not be used. A case carries the URL it names as a `URL` (the catalog's, or
    /// that of its timestamp or signature when that one failed); `description` spells it as `URL.shown`
    /// does (a file's path, any other URL whole).
    public enum LoadError: Error, Sendable, CustomStringConvertible {
        /// The document at `url` could not be read: from a server (`url` not a file) a failure there is
        /// failed work (exit 1) in a build's plan; a file the user named is bad input (exit 2).
        case unreadable(url: URL, reason: String)
        case malformed(JSONFileError)
        case invalid(url: URL, CatalogError)
        /// `--trust` was given and the catalog's signature does not hold (failed work: exit 1).
        case untrusted(url: URL, CatalogTrustError)
        /// The trust ledger's file at `path` (a lineage pin or a catalog's record) is damaged or cannot
        /// be written (`reason` says which and what to do).
        case ledger(path: String, reason: String)

        public var description: String {
            switch self {
            case .unreadable(let url, let reason): "catalog \(url.shown): \(reason)"
            case .malformed(let error): "catalog \(error)"
            case .invalid(let url, let error): "catalog \(url.shown): \(error)"
            case .untrusted(let url, let error): "catalog \(url.shown): \(error)"
            case .ledger(let path, let reason): "catalog \(path): \(reason)"
            }
        }
    }

    /// The catalog at `url`, validated into a region tree.
    public static func load(_ url: URL) throws(LoadError) -> RegionTree {
        try loadWithBytes(url).tree
    }

    /// The catalog at `url` and the exact bytes it was read from (those of `prefetch`, if it ran).
    /// With `cache` (the download cache), an HTTP catalog is fetched the cheap way (`CatalogFetcher`).
    public static func loadWithBytes(_ url: URL, cache: String? = nil) throws(LoadError) -> (tree: RegionTree, bytes: Data) {
        let data = try bytes(of: url, cache: cache)
        return (try decode(data, url: url), data)
    }

    /// `loadWithBytes` for `mappack plan`: the catalog's outline in `language` (`CatalogOutline`).
    package static func loadOutline(
        _ url: URL, cache: String?, language: String?, allNames: Bool
    ) throws(LoadError) -> (outline: CatalogOutline, bytes: Data) {
        let data = try bytes(of: url, cache: cache)
        return (try decodeOutline(data, url: url, language: language, allNames: allNames), data)
    }

    /// The bytes of the catalog at `url`: those `prefetch` kept, or else fetched.
    private static func bytes(of url: URL, cache: String?) throws(LoadError) -> Data {
        if let kept = prefetched.withLock({ $0.removeValue(forKey: url) }) { return kept.bytes }
        return try fetch(url, cache: cache, trust: nil).bytes
    }

    /// Reads the catalog's bytes without decoding them (a no-op build needs only their hash) and
    /// keeps them (and its signature) for the next `loadWithBytes(url)` and `verifySignature`, so a run
    /// reads its catalog once. With `cache`, the timestamp is fetched first and the catalog only when
    /// it names one not kept in `<cache>/catalogs/`, with conditional requests; with `trust`, the
    /// timestamp is checked before it decides anything.
    public static func prefetch(_ url: URL, cache: String? = nil, trust: Trust? = nil) throws(LoadError) -> Data {
        let fetched = try fetch(url, cache: cache, trust: trust)
        prefetched.withLock { $0[url] = fetched }
        return fetched.bytes
    }

    /// Catalogs fetched by `prefetch` (bytes, signature, timestamp), by URL.
    static let prefetched = Mutex<[URL: FetchedCatalog]>([:])

    /// Told the bytes of a catalog received so far while one downloads (`CatalogFetcher.received`):
    /// the CLI's progress line. Nil: nobody listens.
    package static let progress = Mutex<(@Sendable (_ source: String, _ bytes: Int64) -> Void)?>(nil)

    /// Told why a catalog's `.zst` was set aside (`CatalogFetcher.noted`): the CLI's warning. Nil: nobody listens.
    package static let notes = Mutex<(@Sendable (_ message: String) -> Void)?>(nil)

    /// Told before the catalog, its timestamp or signature is tried again (`FetchClient.retrying`):
    /// the CLI's line, as a bundle's retry has one. Nil: nobody listens.
    package static let retries = Mutex<(@Sendable (_ url: URL, _ attempt: Int, _ reason: String, _ seconds: Double) -> Void)?>(nil)

    private static func fetch(_ url: URL, cache: String?, trust: Trust?) throws(LoadError) -> FetchedCatalog {
        let name = url.shown
        var fetcher = CatalogFetcher(cacheRoot: cache.map { $0 + "/catalogs" }, limit: maxBytes)
        // The catalog, its timestamp and signature are retried as bundles are (issue 43: one 503 failed a
        // build at once).
        fetcher.client = FetchClient(retry: .standard)
        fetcher.client.retrying = retries.withLock { $0 }
        fetcher.received = progress.withLock { $0 }
        fetcher.noted = notes.withLock { $0 }
        // A damaged `.zst` on a mirror costs the plain catalog's download, not the build.
        fetcher.fallsBackFromDamagedZst = true
        let timestampRequired = try trust?.hadTimestamps(url: name) ?? false
        do {
            return try fetcher.fetch(url, signed: trust != nil, timestampRequired: timestampRequired) { bytes, source throws(CatalogTrustError) in
                guard let trust else { return try? CatalogTimestamp.parse(bytes, source: source) }
                return try trust.checkTimestamp(bytes, source: source, url: name)
            }
        } catch {
            switch error {
            case .missing:
                throw .unreadable(
                    url: url,
                    reason: url.isFileURL ? "no such file; give the path or URL of a catalog.json (`mappack publish` writes one)" : httpReason(404))
            // The URL that failed: the timestamp's or the signature's is not the catalog's.
            case .fetch(.tooLarge(let failed, let limit)):
                throw .unreadable(url: failed, reason: "larger than \(limit) bytes")
            case .fetch(.failed(let failed, let status, let reason)):
                throw .unreadable(url: failed, reason: status.map { httpReason($0) + (reason.isEmpty ? "" : ": \(reason)") } ?? reason)
            case .undecodable(let source, let reason): throw .unreadable(url: source, reason: reason)
            case .refused(_, let refusal): throw .untrusted(url: url, refusal)
            }
        }
    }

    /// Decodes and validates catalog bytes read from `url`.
    public static func decode(_ data: Data, url: URL) throws(LoadError) -> RegionTree {
        try decodeFull(data, url: url)
    }

    /// The outline of catalog bytes read from `url`, for `mappack plan`.
    ///
    /// A refusal is reported as a build reports it, so that `plan` and `build` print the same
    /// error for the same catalog: the outline read checks what the full read checks, but names
    /// the file by its path, checks bundle URLs in its own way and stops at its first problem, so
    /// on a refusal (and only then) the bytes are read again in full and that read's error is
    /// thrown. Should the full read accept them, the two reads disagree, which is a bug: a debug
    /// build stops there (`CatalogPlanDetailTests` feed both reads the same catalogs); a release
    /// build plans from the full read, the one that decides.
    package static func decodeOutline(_ data: Data, url: URL, language: String?, allNames: Bool = false) throws(LoadError) -> CatalogOutline {
        let refusal: any Error
        do { return try CatalogOutline.read(data, file: url.path, language: language, allNames: allNames) } catch { refusal = error }
        let tree = try decodeFull(data, url: url)
        assertionFailure("catalog \(url.shown): the outline read refused what the full read accepts: \(refusal)")
        return CatalogOutline(tree, language: language)
    }

    /// Every field of the catalog, validated; errors name `url` as a build shows it.
    private static func decodeFull(_ data: Data, url: URL) throws(LoadError) -> RegionTree {
        let catalog: Catalog
        do { catalog = try CatalogReader.read(data, file: url.shown) } catch {
            if let error = error as? JSONFileError {
                // A newer major with another shape should say "unknown format", not "missing field".
                if let format = Self.formatField(data), (try? FormatTagError.check(format, expected: Catalog.formatTag)) == nil {
                    throw .invalid(url: url, .format(.unknown(found: format, expected: Catalog.formatTag)))
                }
                throw .malformed(error)
            }
            throw .unreadable(url: url, reason: "\(error)")
        }
        do { return try RegionTree(catalog) } catch { throw .invalid(url: url, error) }
    }

    private static func formatField(_ data: Data) -> String? {
        struct Head: Decodable { let format: String? }
        return (try? JSONDecoder().decode(Head.self, from: data))?.format
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
