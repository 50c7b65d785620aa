import Foundation
import MapFetch
import MapFormat
import MapIO
import Synchronization

/// Every catalog the store fetches (checks, updates, the catalog URL, downloads) passes here. It is
/// fetched the cheap way (`CatalogFetcher`: the signed `catalog.json.timestamp` first, conditional
/// requests, the `.zst`; kept in `catalog-fetch/`). With trusted keys the timestamp and the
/// catalog's `catalog.json.sig` must hold (see `CatalogTrust`), and what was trusted is remembered in
/// `state.sqlite` before the catalog is used.
extension MapStore {
    /// The catalog at `url`, decoded; refused with a `MapStoreError.catalog…` case when trusted keys
    /// are configured and its timestamp or signature does not hold. Without trusted keys, unsigned catalogs are used as before.
    ///
    /// Cancelling the calling task ends the fetch within about a second, however slow the server (also one
    /// that sends nothing), and throws `MapStoreError.cancelled`; nothing is remembered of the catalog.
    func loadCatalog(_ url: URL) async throws -> (tree: RegionTree, bytes: Data) {
        try await CancellationFlag.runBlocking { [self] flag in try loadCatalogBlocking(url, cancellation: flag) }
    }

    /// `loadCatalog` on the calling thread (for `open`, whose body already runs on a blocking thread);
    /// a raised `cancellation` stops the transfers and throws `cancelled`.
    func loadCatalogBlocking(_ url: URL, cancellation: CancellationFlag? = nil) throws -> (tree: RegionTree, bytes: Data) {
        do { return try loadCatalogUncancelled(url, cancellation: cancellation) } catch {
            try cancellation?.check()
            throw error
        }
    }

    private func loadCatalogUncancelled(_ url: URL, cancellation: CancellationFlag?) throws -> (tree: RegionTree, bytes: Data) {
        var fetcher = CatalogFetcher(
            cacheRoot: core.withLock { $0.layout.root } + "/" + StoreLayout.catalogFetchFolderName, limit: CatalogLoader.maxBytes)
        if let cancellation { fetcher.stop = { cancellation.isCancelled } }
        let configured = options.trustedPublicKeys
        guard !configured.isEmpty else {
            // Nothing is trusted, so the timestamp only saves the download; a malformed one is ignored.
            let fetched = try CatalogLoader.fetch(url, with: fetcher, signed: false) { bytes, source in
                try? CatalogTimestamp.parse(bytes, source: source)
            }
            return (try CatalogLoader.tree(fetched.bytes, source: url.absoluteString), fetched.bytes)
        }
        let now = options.now()
        let trusted = configured.enumerated().map { TrustedKey(path: "trusted key \($0.offset + 1)", text: $0.element) }
        // The device follows the lineage of the image it installed: another catalog id signed by the
        // same key is refused, and the counters are that lineage's.
        let (seenBefore, lineage) = try core.withLock { core throws in
            let state = try core.committedState()
            return (try state.seenCatalog(), try state.meta(.catalogName))
        }
        // A lineage that came with timestamps must keep them (timestampVersion counts from 1).
        let timestampRequired = (seenBefore?.timestampVersion ?? 0) > 0
        let fetched = try CatalogLoader.fetch(url, with: fetcher, signed: true, timestampRequired: timestampRequired) {
            bytes, source throws(CatalogTrustError) in
            try CatalogTrust.checkTimestamp(bytes, source: source, trusted: trusted, seen: seenBefore, lineage: lineage, now: now)
        }
        let source = CatalogSignature.url(beside: url).absoluteString
        return try core.withLock { core throws -> (tree: RegionTree, bytes: Data) in
            let state = try core.committedState()
            // Judged again against what is remembered now: another check may have moved it on meanwhile.
            let seen = try state.seenCatalog()
            var accepted: SeenCatalog
            do {
                if let timestamp = fetched.timestamp, let seen, timestamp.timestampVersion < seen.timestampVersion {
                    throw CatalogTrustError.timestampReplayed(seen: seen.timestampVersion, offered: timestamp.timestampVersion)
                }
                accepted = try CatalogTrust.check(
                    catalogBytes: fetched.bytes, signature: fetched.signature, source: source, trusted: trusted,
                    seen: seen, lineage: lineage, now: now)
            } catch let error as CatalogTrustError {
                throw MapStoreError.catalogRefused(error, url: url)
            }
            accepted.timestampVersion = max(fetched.timestamp?.timestampVersion ?? 0, seen?.timestampVersion ?? 0)
            let tree = try CatalogLoader.tree(fetched.bytes, source: url.absoluteString)
            try state.setSeenCatalog(accepted)
            return (tree, fetched.bytes)
        }
    }
}
