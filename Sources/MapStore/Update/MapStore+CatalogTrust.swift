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

    /// `loadCatalog` judged by the trust records of `trust`'s catalog (the lineage it follows, the
    /// counters it reached), which it then moves on; for a catalog being added (`.new`) nothing is
    /// remembered here, and `seen` is what its row records when the add commits.
    func loadCatalog(_ url: URL, trust: CatalogTrustTarget) async throws -> (tree: RegionTree, bytes: Data, seen: SeenCatalog?) {
        try await CancellationFlag.runBlocking { [self] flag in
            do { return try loadCatalogUncancelled(url, cancellation: flag, trust: trust) } catch {
                try flag.check()
                throw error
            }
        }
    }

    /// `loadCatalog` on the calling thread (for `open`, whose body already runs on a blocking thread);
    /// a raised `cancellation` stops the transfers and throws `cancelled`.
    func loadCatalogBlocking(_ url: URL, cancellation: CancellationFlag? = nil) throws -> (tree: RegionTree, bytes: Data) {
        do {
            let loaded = try loadCatalogUncancelled(url, cancellation: cancellation, trust: .image)
            return (loaded.tree, loaded.bytes)
        } catch {
            try cancellation?.check()
            throw error
        }
    }

    private func loadCatalogUncancelled(
        _ url: URL, cancellation: CancellationFlag?, trust: CatalogTrustTarget
    ) throws -> (tree: RegionTree, bytes: Data, seen: SeenCatalog?) {
        var fetcher = CatalogFetcher(
            cacheRoot: core.withLock { $0.layout.root } + "/" + StoreLayout.catalogFetchFolderName, limit: CatalogLoader.maxBytes)
        if let cancellation { fetcher.stop = { cancellation.isCancelled } }
        let configured = options.trustedPublicKeys
        guard !configured.isEmpty else {
            // Nothing is trusted, so the timestamp only saves the download; a malformed one is ignored.
            let fetched = try CatalogLoader.fetch(url, with: fetcher, signed: false) { bytes, source in
                try? CatalogTimestamp.parse(bytes, source: source)
            }
            return (try CatalogLoader.tree(fetched.bytes, url: url), fetched.bytes, nil)
        }
        let now = options.now()
        let trusted = configured.enumerated().map { TrustedKey(path: "trusted key \($0.offset + 1)", text: $0.element) }
        // The device follows the lineage of the image it installed: another catalog id signed by the
        // same key is refused, and the counters are that lineage's.
        let (seenBefore, lineage) = try core.withLock { core throws in try Self.trustRecords(trust, core: core) }
        // A lineage that came with timestamps must keep them (timestampVersion counts from 1).
        let timestampRequired = (seenBefore?.timestampVersion ?? 0) > 0
        let fetched = try CatalogLoader.fetch(url, with: fetcher, signed: true, timestampRequired: timestampRequired) {
            bytes, source throws(CatalogTrustError) in
            try CatalogTrust.checkTimestamp(bytes, source: source, trusted: trusted, seen: seenBefore, lineage: lineage, now: now)
        }
        let source = CatalogSignature.url(beside: url).shown
        return try core.withLock { core throws -> (tree: RegionTree, bytes: Data, seen: SeenCatalog?) in
            let state = try core.committedState()
            // Judged again against what is remembered now: another check may have moved it on meanwhile.
            let seen = try Self.trustRecords(trust, core: core).seen
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
            let tree = try CatalogLoader.tree(fetched.bytes, url: url)
            switch trust {
            case .image: try state.setSeenCatalog(accepted)
            case .added(let id): try state.setAddedSeen(id, accepted)
            case .new: break
            }
            return (tree, fetched.bytes, accepted)
        }
    }

    /// What was trusted of `trust`'s catalog and the lineage (catalog id) it follows.
    private static func trustRecords(_ trust: CatalogTrustTarget, core: StoreCore) throws -> (seen: SeenCatalog?, lineage: String?) {
        let state = try core.committedState()
        switch trust {
        case .image: return (try state.seenCatalog(), try state.meta(.catalogName))
        case .added(let id): return (try state.addedCatalogs().first { $0.id == id }?.seen, id.rawValue)
        case .new: return (nil, nil)
        }
    }
}

/// Whose trust records judge a catalog the store loads.
enum CatalogTrustTarget: Sendable, Equatable {
    /// The image's catalog (`catalog_trust`).
    case image
    /// An added catalog (its row of `added_catalogs`).
    case added(CatalogID)
    /// A catalog being added: no lineage yet.
    case new

    /// The target of `catalog`.
    init(_ catalog: StoreCatalog) { self = catalog.isImageCatalog ? .image : .added(catalog.id) }
}
