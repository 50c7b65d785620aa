import Foundation
import MapFetch
import MapFormat
import MapIO
import Synchronization

/// Map updates: check a catalog for a newer map version, fetch only the bundles not on the device,
/// stage the new version beside the old and switch atomically.
extension MapStore {
    /// The catalog URL the store remembers (set at open, by `setCatalogURL`, or by a check or update).
    public var catalogURL: URL? { core.withLock { $0.catalogURL } }

    /// Remembers `url` as the store's catalog. When the catalog there is of the installed map
    /// version it is kept in the storage for region listings and downloads.
    public func setCatalogURL(_ url: URL) async throws(MapStoreError) {
        try await MapStoreError.boundary("setCatalogURL", path: storage) {
            let (tree, bytes) = try await loadCatalog(url)
            try core.withLock { core throws in
                let state = try core.committedState()
                try state.setMeta("catalogURL", url.absoluteString)
                try core.keepCatalog(tree, bytes: bytes)
            }
            broadcaster.send(.availableRegionsChanged)
        }
    }

    /// The network policy downloads, updates and repair's fetches obey; setting it applies to work started afterwards.
    public var networkPolicy: NetworkPolicy {
        get { settings.withLock { $0.networkPolicy } }
        set { settings.withLock { $0.networkPolicy = newValue } }
    }

    /// Replaces the network policy (same as setting `networkPolicy`).
    @available(*, deprecated, message: "set networkPolicy")
    public func setNetworkPolicy(_ policy: NetworkPolicy) { networkPolicy = policy }

    /// Whether `checkForUpdate` runs `update` when it finds a newer version.
    public var autoUpdate: Bool {
        get { settings.withLock { $0.autoUpdate } }
        set { settings.withLock { $0.autoUpdate = newValue } }
    }

    /// Turns automatic updates on or off (same as setting `autoUpdate`).
    @available(*, deprecated, message: "set autoUpdate")
    public func setAutoUpdate(_ enabled: Bool) { autoUpdate = enabled }

    /// Compares the installed data with the catalog at `catalog` (or the remembered one); see
    /// `UpdateInfo` for the status rule. Marks installed regions `outdated` (newer version) or
    /// `needUpdate` (support window passed). With `autoUpdate` on and a newer version found, runs
    /// `update` before returning. Throws `rollbackRefused` for a catalog with an older version.
    public func checkForUpdate(catalog: URL? = nil) async throws(MapStoreError) -> UpdateInfo {
        try await MapStoreError.boundary("checkForUpdate", path: storage) {
            guard let url = catalog ?? catalogURL else { throw MapStoreError.noCatalogURL }
            let (tree, bytes) = try await loadCatalog(url)
            let info = try write { core throws -> UpdateInfo in
                let info = try core.planUpdate(tree: tree, catalogURL: url).info
                try core.state?.setMeta("catalogURL", url.absoluteString)
                try core.markChecked(info)
                if info.availableVersion == info.installedVersion { try core.keepCatalog(tree, bytes: bytes) }
                return info
            }
            if info.availableVersion == info.installedVersion { broadcaster.send(.availableRegionsChanged) }
            if autoUpdate, info.availableVersion > info.installedVersion { try await update(catalog: url) }
            return info
        }
    }

    /// Updates the installed regions to the catalog's map version.
    ///
    /// Fetches only bundles not on the device into the storage's download cache (`downloads/`;
    /// verified, resumable: cancelling the calling task keeps partial files, and the next call
    /// resumes them), then stages the new store tree beside the old one (unchanged files
    /// hard-linked, new bundles extracted and fsynced), switches with renames under a pending
    /// record and commits a manifest for the new version. Bundles no longer referenced go with the
    /// old tree. Regions the catalog dropped become `unsupported`. The cache is cleared and stamped
    /// with the new version before the switch. A catalog with an older version is refused
    /// (`rollbackRefused`) and nothing changes; with the same version this does nothing.
    public func update(catalog: URL? = nil, progress: @escaping @Sendable (UpdateProgress) -> Void = { _ in }) async throws(MapStoreError) {
        let broadcaster = broadcaster
        let report: @Sendable (UpdateProgress) -> Void = { step in
            progress(step)
            broadcaster.send(.updateProgress(step))
        }
        do {
            try await runUpdate(catalog: catalog, progress: report)
        } catch {
            broadcaster.send(.updateFailed(error))
            throw error
        }
    }

    /// The body of `update`; the caller reports failures to the event consumers.
    private func runUpdate(catalog: URL?, progress: @escaping @Sendable (UpdateProgress) -> Void) async throws(MapStoreError) {
        try await MapStoreError.boundary("update", path: storage) {
            guard let url = catalog ?? catalogURL else { throw MapStoreError.noCatalogURL }
            let (tree, bytes) = try await loadCatalog(url)
            let plan = try core.withLock { core throws -> StoreCore.UpdatePlan in try core.planUpdate(tree: tree, catalogURL: url) }
            guard plan.info.availableVersion > plan.info.installedVersion else { return }
            guard networkPolicy.permitsCurrentNetwork else { throw MapStoreError.meteredNetworkDisallowed(regions: plan.supported) }
            let changing = plan.supported
            try write { core throws in
                try core.committedState().setStates(Dictionary(uniqueKeysWithValues: changing.map { ($0, RegionState.downloading) }))
            }
            for id in changing { broadcaster.send(.regionStateChanged(id, .downloading)) }
            let archives: [BundleDigest: String]
            await fetchChunked(plan.requests, tree: tree, catalogURL: url, installed: plan.stored)
            do {
                archives = try await fetch(plan.requests) { received, total in
                    progress(UpdateProgress(phase: .fetching, receivedBytes: received, totalBytes: total))
                }
            } catch {
                try? write { core throws in
                    try core.committedState().setStates(Dictionary(uniqueKeysWithValues: changing.map { ($0, RegionState.outdated) }))
                }
                for id in changing { broadcaster.send(.regionStateChanged(id, .outdated)) }
                throw error
            }
            CrashPoint.reach("update.afterFetch")
            progress(UpdateProgress(phase: .installing, receivedBytes: plan.info.updateBytes, totalBytes: plan.info.updateBytes))
            _ = try await BlockingPool.run { [self] in
                try write { core throws -> ImageManifest in
                    try core.applyUpdate(tree: tree, catalogURL: url, catalogBytes: bytes, archives: archives)
                }
            }
            for id in plan.supported { broadcaster.send(.regionStateChanged(id, .completed)) }
            for id in plan.unsupported { broadcaster.send(.regionStateChanged(id, .unsupported)) }
            broadcaster.send(.updateFinished(tree.catalog.mapVersion))
            broadcaster.send(.availableRegionsChanged)
            progress(UpdateProgress(phase: .done, receivedBytes: plan.info.updateBytes, totalBytes: plan.info.updateBytes))
        }
    }

    /// Fetches `requests` into the storage's download cache; `progress` gets (received, total) bytes.
    /// Maps fetch failures to `MapStoreError.remote`, `.local` or `.cancelled`.
    func fetch(
        _ requests: [FetchRequest], onBundle: @escaping @Sendable (FetchEvent) -> Void = { _ in },
        progress: @escaping @Sendable (Int64, Int64) -> Void
    ) async throws -> [BundleDigest: String] {
        // Counted under the store's lock, so a move (which checks the count under it) never starts
        // while a fetcher writes into the download cache, and no fetch starts during a move.
        let folder = core.withLock { core -> String in
            fetching.withLock { $0 += 1 }
            return core.downloadFolder
        }
        defer { fetching.withLock { $0 -= 1 } }
        let total = requests.reduce(Int64(0)) { $0 + $1.size }
        let received = Mutex<[BundleDigest: Int64]>([:])
        let policy = RetryPolicy(maxAttempts: options.fetchAttempts, baseDelay: options.fetchRetryDelay, maxDelay: max(options.fetchRetryDelay, 30))
        let fetcher = BundleFetcher(cache: DownloadCache(root: folder), jobs: 4, policy: policy)
        do throws(FetchError) {
            return try await fetcher.fetch(requests) { event in
                onBundle(event)
                let sum: Int64? = received.withLock { map in
                    switch event {
                    case .progress(let digest, let bytes, _): map[digest] = bytes
                    case .verified(let digest, let size), .alreadyCached(let digest, let size): map[digest] = size
                    default: return nil
                    }
                    return map.values.reduce(0, +)
                }
                if let sum { progress(sum, total) }
            }
        } catch {
            throw MapStore.storeError(error)
        }
    }

    /// A fetch failure in the store's two classes.
    static func storeError(_ error: FetchError) -> MapStoreError {
        switch error.reason {
        case .cancelled: return .cancelled
        case .local(let file):
            return .local(path: file.path, errno: file.code, regions: error.regions, bundle: error.bundle, reason: file.description)
        case .httpStatus(let code):
            return .remote(url: error.url.absoluteString, httpStatus: code, regions: error.regions, bundle: error.bundle, reason: error.description)
        default:
            return .remote(
                url: error.url.absoluteString, httpStatus: error.httpStatus, regions: error.regions, bundle: error.bundle, reason: error.description)
        }
    }
}
