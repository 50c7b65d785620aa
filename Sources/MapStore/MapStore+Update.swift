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
    public func setCatalogURL(_ url: URL) async throws {
        let (tree, bytes) = try await loadCatalog(url)
        try core.withLock { core throws in
            let state = try core.committedState()
            try state.setMeta("catalogURL", url.absoluteString)
            try core.keepCatalog(tree, bytes: bytes)
        }
    }

    /// The network policy downloads and updates obey.
    public var networkPolicy: NetworkPolicy {
        get { settings.withLock { $0.networkPolicy } }
    }

    /// Replaces the network policy (applies to downloads and updates started afterwards).
    public func setNetworkPolicy(_ policy: NetworkPolicy) { settings.withLock { $0.networkPolicy = policy } }

    /// Whether `checkForUpdate` runs `update` when it finds a newer version.
    public var autoUpdate: Bool { settings.withLock { $0.autoUpdate } }

    /// Turns automatic updates on or off.
    public func setAutoUpdate(_ enabled: Bool) { settings.withLock { $0.autoUpdate = enabled } }

    /// Compares the installed data with the catalog at `catalog` (or the remembered one); see
    /// `UpdateInfo` for the status rule. Marks installed regions `outdated` (newer version) or
    /// `needUpdate` (support window passed). With `autoUpdate` on and a newer version found, runs
    /// `update` before returning. Throws `rollbackRefused` for a catalog with an older version.
    public func checkForUpdate(catalog: URL? = nil) async throws -> UpdateInfo {
        guard let url = catalog ?? catalogURL else { throw MapStoreError.noCatalogURL }
        let (tree, bytes) = try await loadCatalog(url)
        let info = try core.withLock { core throws -> UpdateInfo in
            let info = try core.planUpdate(tree: tree, catalogURL: url).info
            try core.state?.setMeta("catalogURL", url.absoluteString)
            try core.markChecked(info)
            if info.availableVersion == info.installedVersion { try core.keepCatalog(tree, bytes: bytes) }
            return info
        }
        if autoUpdate, info.availableVersion > info.installedVersion { try await update(catalog: url) }
        return info
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
    public func update(catalog: URL? = nil, progress: @escaping @Sendable (UpdateProgress) -> Void = { _ in }) async throws {
        guard let url = catalog ?? catalogURL else { throw MapStoreError.noCatalogURL }
        let (tree, bytes) = try await loadCatalog(url)
        let plan = try core.withLock { core throws -> StoreCore.UpdatePlan in try core.planUpdate(tree: tree, catalogURL: url) }
        guard plan.info.availableVersion > plan.info.installedVersion else { return }
        guard networkPolicy.permitsCurrentNetwork else { throw MapStoreError.meteredNetworkDisallowed(regions: plan.supported) }
        let changing = plan.supported
        try core.withLock { core throws in try core.committedState().setStates(Dictionary(uniqueKeysWithValues: changing.map { ($0, RegionState.downloading) })) }
        let archives: [BundleDigest: String]
        await fetchChunked(plan.requests, tree: tree, catalogURL: url)
        do {
            archives = try await fetch(plan.requests) { received, total in
                progress(UpdateProgress(phase: .fetching, receivedBytes: received, totalBytes: total))
            }
        } catch {
            try? core.withLock { core throws in try core.committedState().setStates(Dictionary(uniqueKeysWithValues: changing.map { ($0, RegionState.outdated) })) }
            throw error
        }
        CrashPoint.reach("update.afterFetch")
        progress(UpdateProgress(phase: .installing, receivedBytes: plan.info.updateBytes, totalBytes: plan.info.updateBytes))
        _ = try await BlockingPool.run { [self] in
            try core.withLock { core throws -> ImageManifest in
                try core.applyUpdate(tree: tree, catalogURL: url, catalogBytes: bytes, archives: archives)
            }
        }
        progress(UpdateProgress(phase: .done, receivedBytes: plan.info.updateBytes, totalBytes: plan.info.updateBytes))
    }

    /// Fetches `requests` into the storage's download cache; `progress` gets (received, total) bytes.
    /// Maps fetch failures to `MapStoreError.remote`, `.local` or `.cancelled`.
    func fetch(_ requests: [FetchRequest], onBundle: @escaping @Sendable (FetchEvent) -> Void = { _ in },
               progress: @escaping @Sendable (Int64, Int64) -> Void) async throws -> [BundleDigest: String] {
        let folder = core.withLock { $0.downloadFolder }
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
        case .local(let file): return .local(path: file.path, errno: file.code, regions: error.regions, bundle: error.bundle, reason: file.description)
        case .httpStatus(let code): return .remote(url: error.url.absoluteString, httpStatus: code, regions: error.regions, bundle: error.bundle, reason: error.description)
        default: return .remote(url: error.url.absoluteString, httpStatus: error.httpStatus, regions: error.regions, bundle: error.bundle, reason: error.description)
        }
    }
}
