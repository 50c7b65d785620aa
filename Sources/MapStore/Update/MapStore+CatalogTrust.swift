import Foundation
import MapFormat
import MapIO
import Synchronization

/// Every catalog the store fetches (checks, updates, the catalog URL, downloads) passes here: with
/// trusted keys it must carry a valid `catalog.json.sig` (see `CatalogTrust`), and what was trusted is
/// remembered in `state.sqlite` before the catalog is used.
extension MapStore {
    /// The catalog at `url`, decoded; refused with a `MapStoreError.catalog…` case when trusted keys
    /// are configured and its signature does not hold. Without trusted keys, unsigned catalogs are used as before.
    ///
    /// Cancelling the calling task ends the fetch within about a second, however slow the server (also one
    /// that sends nothing), and throws `MapStoreError.cancelled`; nothing is remembered of the catalog.
    func loadCatalog(_ url: URL) async throws -> (tree: RegionTree, bytes: Data) {
        try await CancellationFlag.runBlocking { [self] flag in try loadCatalogBlocking(url, cancellation: flag) }
    }

    /// `loadCatalog` on the calling thread (for `open`, whose body already runs on a blocking thread).
    func loadCatalogBlocking(_ url: URL, cancellation: CancellationFlag? = nil) throws -> (tree: RegionTree, bytes: Data) {
        let configured = options.trustedPublicKeys
        guard !configured.isEmpty else { return try CatalogLoader.loadBlocking(url, cancellation: cancellation) }
        let (bytes, signature) = try CatalogLoader.fetchSignedBlocking(url, cancellation: cancellation)
        try cancellation?.check()
        let now = options.now()
        let trusted = configured.enumerated().map { TrustedKey(path: "trusted key \($0.offset + 1)", text: $0.element) }
        let source = CatalogSignature.url(beside: url).absoluteString
        return try core.withLock { core throws -> (tree: RegionTree, bytes: Data) in
            let state = try core.committedState()
            let accepted: SeenCatalog
            do {
                // The device follows the lineage of the image it installed: another catalog id signed by
                // the same key is refused, and the counters are that lineage's.
                accepted = try CatalogTrust.check(
                    catalogBytes: bytes, signature: signature, source: source, trusted: trusted,
                    seen: try state.seenCatalog(), lineage: try state.meta(.catalogName), now: now)
            } catch let error as CatalogTrustError {
                throw MapStoreError.catalogRefused(error, url: url)
            }
            let tree = try CatalogLoader.tree(bytes, source: url.absoluteString)
            try state.setSeenCatalog(accepted)
            return (tree, bytes)
        }
    }
}
