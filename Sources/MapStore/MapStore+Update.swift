import Foundation
import MapFetch
import MapFormat
import MapIO
import Synchronization

/// Map updates: check a catalog for a newer map version, fetch only the bundles not on the device,
/// stage the new version beside the old and switch atomically.
extension MapStore {
    /// The catalog the installed data comes from, which downloads resolve bundle URLs against: set at
    /// open (`Options.catalogURL`), by `setCatalogURL` with a catalog of the installed map version, and by
    /// an update; a check never changes it. Never waits for a write in progress.
    public var catalogURL: URL? { snapshot.catalogURL }

    /// Remembers `url` as the URL of the store's catalog it serves (the one with the same catalog id): the
    /// next check or update of that catalog reads it when none is named. When the catalog there is of the
    /// map version the device holds of it, it is kept in the storage for region listings and downloads,
    /// which resolve bundle URLs against `url` from then on; a catalog of another version changes nothing
    /// downloads use (an update to it does). A URL serving a catalog the store does not have is refused
    /// (`unknownCatalog`) and changes nothing: add it with `addCatalog(url:)`, so one catalog never
    /// replaces another's regions.
    public func setCatalogURL(_ url: URL) async throws(MapStoreError) {
        try await MapStoreError.boundary("setCatalogURL", path: storageFolder) {
            // The kept catalog and the trust records it may write are the storage's: held for the whole call.
            let lease = try await holdStorageOffPool()
            defer { lease.release() }
            let expected = try await readOffPool { core throws in try core.catalogForURL(url) }
            let (tree, bytes, _) = try await loadCatalog(url, trust: CatalogTrustTarget(expected))
            let kept = try write { core throws -> Bool in
                let catalog = try core.catalogServed(tree, url: url, expected: expected)
                try core.rememberChecked(url, of: catalog)
                return try core.keep(tree, bytes: bytes, url: url, as: catalog)
            }
            if kept { broadcaster.send(.availableRegionsChanged) }
        }
    }

    /// The network policy downloads, updates and repair's fetches obey; setting it applies to work started afterwards.
    public var networkPolicy: NetworkPolicy {
        get { settings.withLock { $0.networkPolicy } }
        set { settings.withLock { $0.networkPolicy = newValue } }
    }

    /// Whether the store updates by itself: a check now and every `autoUpdateInterval`, and
    /// `checkForUpdate` runs `update` when it finds a newer version (see `autoUpdateInterval` and
    /// `networkChanged(metered:)`).
    public var autoUpdate: Bool {
        get { settings.withLock { $0.autoUpdate } }
        set {
            let changed = settings.withLock { settings -> Bool in
                defer { settings.autoUpdate = newValue }
                return settings.autoUpdate != newValue
            }
            if changed { autoUpdateChanged(to: newValue) }
        }
    }

    /// Compares the installed data with the catalog at `catalog` (or, when nil, the one last checked or
    /// set, else `catalogURL`); see `UpdateInfo` for the status rule. The catalog is remembered for the
    /// next check and `update()`; `catalogURL`, which downloads resolve against, does not change. Marks installed regions `outdated` (newer version) or
    /// `needUpdate` (support window passed); a newer version is announced (`StoreEvent.updateAvailable`).
    /// With `autoUpdate` on and a newer version found, runs `update` before returning, unless the network
    /// policy holds it back (`StoreEvent.updateDeferred`) or an automatic update runs already. Throws
    /// `rollbackRefused` for a catalog with an older version.
    ///
    /// A store holds several catalogs (`catalogs()`): `in` names the one to check (nil: the one `catalog`
    /// serves, else the image's); only that catalog's regions are compared and marked. `checkForUpdates()`
    /// checks them all.
    public func checkForUpdate(catalog: URL? = nil, in catalogID: CatalogID? = nil) async throws(MapStoreError) -> UpdateInfo {
        let (info, url) = try await findUpdate(catalog: catalog, in: catalogID)
        if autoUpdate, info.availableVersion > info.installedVersion { try await updateAutomatically(info, catalog: url) }
        return info
    }

    /// Checks every catalog of the store that has a URL (`checkForUpdate(in:)` for each, the image's
    /// first), as HERE's `retrieveCatalogsUpdateInfo`: one `UpdateInfo` per catalog.
    public func checkForUpdates() async throws(MapStoreError) -> [UpdateInfo] {
        var out: [UpdateInfo] = []
        for entry in catalogsOf(snapshot) where entry.catalog.toCheck != nil {
            out.append(try await checkForUpdate(in: entry.catalog.id))
        }
        return out
    }

    /// Updates every catalog of the store that has a URL and a newer version, the image's first, as
    /// HERE's `updateCatalog` for each: checks it (`checkForUpdate(in:)`, without the automatic update) and,
    /// when newer, `update(catalog:in:)` to it. Each catalog is switched in its own commit, so one that
    /// fails (its check or its update) is reported in its result and leaves the others' updates in place;
    /// its own regions and version stay as they were. One result per catalog checked. `progress` hears
    /// each update's steps with its catalog. Cancelling the calling task stops the update under way (as
    /// `update` does, keeping its fetched bytes) and throws `cancelled`; catalogs done before stay updated.
    public func updateAll(
        progress: @escaping @Sendable (CatalogID, UpdateProgress) -> Void = { _, _ in }
    ) async throws(MapStoreError) -> [CatalogUpdateResult] {
        var out: [CatalogUpdateResult] = []
        for entry in catalogsOf(snapshot) where entry.catalog.toCheck != nil {
            if Task.isCancelled { throw MapStoreError.cancelled }
            let id = entry.catalog.id
            var info: UpdateInfo?
            do throws(MapStoreError) {
                let found = try await findUpdate(catalog: nil, in: id)
                info = found.info
                guard found.info.availableVersion > found.info.installedVersion else {
                    out.append(CatalogUpdateResult(catalog: id, info: found.info, outcome: .upToDate, error: nil))
                    continue
                }
                try await update(catalog: found.url, in: id) { progress(id, $0) }
                out.append(CatalogUpdateResult(catalog: id, info: found.info, outcome: .updated, error: nil))
            } catch {
                if case .cancelled = error { throw error }
                out.append(CatalogUpdateResult(catalog: id, info: info, outcome: .failed, error: error))
            }
        }
        return out
    }

    /// The store's catalog a check or an update is of: the one named, else the added one `url` is
    /// remembered for, else the image's (`StoreCore.catalogForURL`); and the URL to read.
    func updateTarget(catalog url: URL?, in catalogID: CatalogID?) async throws -> (catalog: StoreCatalog, url: URL) {
        let target = try await readOffPool { core throws in try catalogID.map(core.storeCatalog) ?? core.catalogForURL(url) }
        guard let url = url ?? target.toCheck else { throw MapStoreError.noCatalogURL }
        return (target, url)
    }

    /// The check of `checkForUpdate`, without the automatic update: the comparison and the catalog's URL.
    func findUpdate(catalog: URL?, in catalogID: CatalogID? = nil) async throws(MapStoreError) -> (info: UpdateInfo, url: URL) {
        try await MapStoreError.boundary("checkForUpdate", path: storageFolder) {
            let (target, url) = try await updateTarget(catalog: catalog, in: catalogID)
            let lease = try await holdStorageOffPool()
            defer { lease.release() }
            let (tree, bytes, _) = try await loadCatalog(url, trust: CatalogTrustTarget(target))
            let (info, kept) = try write { core throws -> (UpdateInfo, Bool) in
                let served = try core.catalogServed(tree, url: url, expected: target)
                if catalogID != nil, served.id != target.id {
                    throw MapStoreError.unknownCatalog(catalog: served.id.rawValue, url: url, catalogs: [target.id.rawValue])
                }
                let catalog = try core.storeCatalog(served.id)
                let info = try core.planUpdate(tree: tree, catalog: catalog, catalogURL: url).info
                // What later work depends on stays: downloads resolve against the installed catalog. Only a
                // store that keeps no catalog of its version yet keeps this one (with its URL).
                try core.rememberChecked(url, of: catalog)
                try core.markChecked(info, catalog: catalog)
                let kept = try core.keptTree(of: catalog) == nil && core.keep(tree, bytes: bytes, url: url, as: catalog)
                return (info, kept)
            }
            if kept { broadcaster.send(.availableRegionsChanged) }
            if info.availableVersion > info.installedVersion { broadcaster.send(.updateAvailable(info)) }
            return (info, url)
        }
    }

    /// Updates the installed regions to the catalog's map version: `startUpdate(catalog:)`, then
    /// waits for it (`UpdateTask.wait()`).
    ///
    /// Cancelling the calling task stops the update and keeps the bytes fetched so far (the next
    /// update resumes them) and throws `MapStoreError.cancelled`; `progress` receives what the
    /// `.updateProgress` events say. See `startUpdate(catalog:)` for what an update does.
    public func update(
        catalog: URL? = nil, in catalogID: CatalogID? = nil, progress: @escaping @Sendable (UpdateProgress) -> Void = { _ in }
    ) async throws(MapStoreError) {
        let task = try startUpdate(catalog: catalog, in: catalogID, progress: progress)
        try await MapStoreError.boundary("update", path: storageFolder) {
            try await withTaskCancellationHandler {
                try await task.wait()
            } onCancel: {
                task.stop(keepingFetchedBytes: true)
            }
        }
    }

    /// Starts updating the installed regions to the catalog's map version and returns the update,
    /// which can be paused, resumed, cancelled and waited for.
    ///
    /// Fetches only bundles not on the device into the storage's download cache (`downloads/`;
    /// verified, resumable), then stages the new store tree beside the old one (unchanged files
    /// hard-linked, new bundles extracted and fsynced), switches with renames under a pending
    /// record and commits a manifest for the new version. Bundles no longer referenced go with the
    /// old tree. Regions the catalog dropped become `unsupported`. The cache is cleared and stamped
    /// with the new version before the switch. A catalog with an older version is refused
    /// (`rollbackRefused`) and nothing changes; with the same version this does nothing.
    ///
    /// One update runs at a time: while one is live (running or paused) this returns it (resuming it
    /// when paused) if it is for the same catalog, and throws `busy` otherwise. Throws at once when
    /// nothing is installed; catalog, fetch and install failures arrive from `wait()` and as
    /// `.updateFailed` events. Never waits for a write in progress (a move, a repair, a download's
    /// install): the update starts its work when that write has ended.
    ///
    /// A store holds several catalogs (`catalogs()`): an update installs a version of one of them, `in`
    /// (nil: the one `catalog` serves, else the image's), and leaves the regions of the others as they are.
    @discardableResult
    public func startUpdate(catalog: URL? = nil, in catalogID: CatalogID? = nil) throws(MapStoreError) -> UpdateTask {
        try startUpdate(catalog: catalog, in: catalogID, progress: { _ in })
    }

    /// `startUpdate(catalog:in:)` with a progress callback for `update(catalog:in:progress:)`.
    private func startUpdate(
        catalog: URL?, in catalogID: CatalogID?, progress: @escaping @Sendable (UpdateProgress) -> Void
    ) throws(MapStoreError) -> UpdateTask {
        try MapStoreError.boundary("update", path: storageFolder) {
            try checkInstalledWithoutWaiting()
            let (start, task) = runtime.withLock { runtime in
                runtime.startUpdate(
                    { UpdateTask(store: self, catalog: catalog, catalogID: catalogID, progress: progress) },
                    sameCatalog: { $0.catalog == catalog && $0.catalogID == catalogID })
            }
            guard let task else {
                throw MapStoreError.busy(
                    operation: "update", reason: "an update from another catalog is under way; wait for it, or cancel it (UpdateTask.cancel())")
            }
            if start == .existing { task.resume() } else { task.start() }
            return task
        }
    }

    /// The body of an `UpdateTask` run (first start or resume): the update, then settling the task.
    func runUpdate(_ task: UpdateTask) async {
        // Held for the whole run (fetch and install): another process writing the storage meanwhile would
        // take this update's `downloading` regions for a dead process's. Waiting for it can be cancelled.
        var lease: StorageLease?
        var waitFailure: MapStoreError?
        do { lease = try await holdStorageOffPool() } catch { waitFailure = MapStoreError.wrapping(error, operation: "update", path: storageFolder) }
        defer { lease?.release() }
        do throws(MapStoreError) {
            if let waitFailure { throw waitFailure }
            try await performUpdate(task)
            task.finish(.success(()))
        } catch {
            // Stopped while waiting for another process: this run changed nothing to settle.
            let holding = lease != nil
            let cancelled: Bool
            if case .cancelled = error { cancelled = true } else { cancelled = false }
            await settle(task, failure: error, cancelled: cancelled, updateSettling(task, recording: holding))
        }
    }

    /// An update's part of settling a stopped run (`settle`); `recording` is false when the run changed
    /// nothing in the state (stopped while waiting for another process).
    func updateSettling(_ task: UpdateTask, recording: Bool) -> RunSettling {
        RunSettling(
            // The fetch recorded the regions `paused` as it stopped (`fetchAndApplyUpdate`).
            recordPaused: {},
            announcePaused: { [self] in broadcaster.send(.updatePaused) },
            endKeepingBytes: { [self] in if recording { try await settleStoppedUpdate(task, keepingFetchedBytes: true) } },
            endRemovingBytes: { [self] in if recording { try await settleStoppedUpdate(task, keepingFetchedBytes: false) } },
            failed: { [self] error in broadcaster.send(.updateFailed(error)) })
    }

    /// A stopped update's regions go back to `outdated`; without `keepingFetchedBytes` its fetched
    /// bundles (those no other task claims) are removed too. Its claims are let go either way.
    func settleStoppedUpdate(_ task: UpdateTask, keepingFetchedBytes: Bool) async throws {
        let recorded = task.recorded
        let (bundles, regions) = (recorded.bundles, recorded.regions)
        let owner = ObjectIdentifier(task)
        try await writeOffPool { [self] core throws in
            let removable = runtime.withLock { $0.cleanup(bundles, of: owner) }
            if !keepingFetchedBytes { try core.removeDownloads(removable) }
            // A store that is not installed, or whose switch was left pending, is repair's to settle (which pauses them).
            guard let state = try core.committedStateIfSettled() else { return }
            let marked = Set(regions)
            let back = try state.regions().filter { marked.contains($0.id) && ($0.state == .downloading || $0.state == .paused) }.map(\.id)
            try state.setStates(Dictionary(uniqueKeysWithValues: back.map { ($0, RegionState.outdated) }))
        }
        runtime.withLock { $0.settleProgress(regions) }
    }

    /// Fetches and installs an update; throws `.cancelled` when the runner was cancelled (pause, cancel, stop),
    /// `outOfSpace` when a write found the disk full (as the install says it).
    private func performUpdate(_ task: UpdateTask) async throws(MapStoreError) {
        do { try await fetchAndApplyUpdate(task) } catch { throw MapStoreError.outOfSpace(error, storage: storageFolder) ?? error }
    }

    private func fetchAndApplyUpdate(_ task: UpdateTask) async throws(MapStoreError) {
        let broadcaster = broadcaster
        let report: @Sendable (UpdateProgress) -> Void = { step in
            task.progress(step)
            broadcaster.send(.updateProgress(step))
        }
        try await MapStoreError.boundary("update", path: storageFolder) {
            await waitForWriteInProgress()
            let (target, url) = try await updateTarget(catalog: task.catalog, in: task.catalogID)
            let (tree, bytes, _) = try await loadCatalog(url, trust: CatalogTrustTarget(target))
            let (catalog, plan) = try await readOffPool { core throws -> (StoreCatalog, StoreCore.UpdatePlan) in
                let served = try core.catalogServed(tree, url: url, expected: target)
                if task.catalogID != nil, served.id != target.id {
                    throw MapStoreError.unknownCatalog(catalog: served.id.rawValue, url: url, catalogs: [target.id.rawValue])
                }
                return (served, try core.planUpdate(tree: tree, catalog: served, catalogURL: url))
            }
            guard plan.info.availableVersion > plan.info.installedVersion else { return }
            guard networkPermitsFetching else { throw MapStoreError.meteredNetworkDisallowed(regions: plan.supported) }
            try Task.checkCancellation()
            broadcaster.send(.updateStarted(plan.info))
            let changing = plan.supported
            let claimed = Set(plan.requests.map(\.digest))
            task.record(bundles: claimed, regions: changing)
            try await writeOffPool { [self] core throws in
                // Claimed under the store's lock, where a cancelled task's cleanup reads the claims: it never
                // removes what this update is about to fetch.
                runtime.withLock { $0.claim(claimed, by: ObjectIdentifier(task)) }
                try core.committedState().setStates(Dictionary(uniqueKeysWithValues: changing.map { ($0, RegionState.downloading) }))
            }
            let archives: [BundleDigest: String]
            await fetchChunked(plan.requests, tree: tree, catalogURL: url, installed: plan.stored)
            let root = storageFolder
            let onDevice = Dictionary(
                plan.requests.map { ($0.digest, StoreCore.downloadedBytes($0.digest, root: root)) }, uniquingKeysWith: { first, _ in first })
            let perRegion = UpdateRegionProgress(plan.requests, onDevice: onDevice)
            for (region, got, total) in perRegion.all() { reportProgress(region, receivedBytes: got, totalBytes: total) }
            do {
                archives = try await fetch(
                    plan.requests,
                    onBundle: { [self] event in
                        for (region, got, total) in perRegion.record(event) { reportProgress(region, receivedBytes: got, totalBytes: total) }
                    },
                    progress: { received, total in
                        report(UpdateProgress(phase: .fetching, receivedBytes: received, totalBytes: total))
                    })
                // A pause, cancel or stop that came in while the fetch ended is honoured here; later ones are refused.
                guard task.control.beginInstall() else { throw MapStoreError.cancelled }
            } catch {
                // Paused: the regions wait (still installed and usable); a pause that cannot be recorded fails
                // the update (said as that failure). Else they are outdated again (see `recordOutdated`).
                if case .cancelled? = error as? MapStoreError, task.phase == .pausing {
                    try await writeOffPool { core throws in
                        try core.committedState().setStates(Dictionary(uniqueKeysWithValues: changing.map { ($0, RegionState.paused) }))
                    }
                } else {
                    await recordOutdated(changing)
                }
                throw error
            }
            CrashPoint.reach("update.afterFetch")
            report(UpdateProgress(phase: .installing, receivedBytes: plan.info.updateBytes, totalBytes: plan.info.updateBytes))
            let cacheReset: CacheReset?
            do {
                cacheReset = try await BlockingPool.run { [self] in
                    try write { core throws -> CacheReset? in
                        core.cacheReset = nil
                        defer { core.cacheReset = nil }
                        _ = try core.applyUpdate(tree: tree, catalog: catalog, catalogURL: url, catalogBytes: bytes, archives: archives)
                        return core.cacheReset
                    }
                }
            } catch {
                // Rolled back: the regions are outdated again. A switch left pending is repair's (which pauses them).
                await recordOutdated(changing)
                throw error
            }
            runtime.withLock { $0.settleProgress(changing) }
            if var cacheReset, cacheReset.removedEntries > 0 || cacheReset.keptEntries > 0 {
                cacheReset.catalog = catalog.id
                broadcaster.send(.mapCacheReset(cacheReset))
            }
            broadcaster.send(.updateFinished(tree.catalog.mapVersion))
            broadcaster.send(.availableRegionsChanged)
            report(UpdateProgress(phase: .done, receivedBytes: plan.info.updateBytes, totalBytes: plan.info.updateBytes))
        }
    }

    /// After a failed update, its regions are `outdated` again and keep no progress. The update's own
    /// failure is what the caller hears: when this cannot be recorded either (the disk that failed the
    /// update fails this too), the regions stay `downloading` in the state, which the next write's
    /// take-over or the next open records `paused` (`StoreCore.pauseInterruptedFetches`), and a later
    /// update resumes them.
    func recordOutdated(_ regions: [RegionID]) async {
        do {
            try await writeOffPool { core throws in
                // Not installed any more, or a switch left pending: nothing to mark (repair settles a pending switch).
                guard let state = try core.committedStateIfSettled() else { return }
                try state.setStates(Dictionary(uniqueKeysWithValues: regions.map { ($0, RegionState.outdated) }))
            }
        } catch {
            // See above: settled by the next take-over or open.
        }
        runtime.withLock { $0.settleProgress(regions) }
    }

    /// Fetches `requests` into the storage's download cache; `progress` gets (received, total) bytes.
    /// Maps fetch failures to `MapStoreError.remote`, `.local` or `.cancelled`.
    func fetch(
        _ requests: [FetchRequest], onBundle: @escaping @Sendable (FetchEvent) -> Void = { _ in },
        progress: @escaping @Sendable (Int64, Int64) -> Void
    ) async throws -> [BundleDigest: String] {
        // Counted under the store's lock, so a move (which checks the count under it) never starts
        // while a fetcher writes into the download cache, and no fetch starts during a move.
        let folder = try await readOffPool { [self] core -> String in
            runtime.withLock { $0.beginFetch() }
            return core.downloadFolder
        }
        defer { runtime.withLock { $0.endFetch() } }
        let total = requests.reduce(Int64(0)) { $0 + $1.size }
        let received = Mutex<[BundleDigest: Int64]>([:])
        let fetcher = BundleFetcher(cache: DownloadCache(root: folder), jobs: 4, policy: fetchRetryPolicy)
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
            return .remote(url: error.url, httpStatus: code, regions: error.regions, bundle: error.bundle, reason: error.description)
        default:
            return .remote(
                url: error.url, httpStatus: error.httpStatus, regions: error.regions, bundle: error.bundle, reason: error.description)
        }
    }
}

extension MapStore {
    /// The retry policy of every fetch of the store (bundles of a download or an update, a bundle
    /// fetched again by `repair()`), from `Options.fetchAttempts` and `Options.fetchRetryDelay`.
    var fetchRetryPolicy: RetryPolicy {
        let delay = options.fetchRetryDelay.inSeconds
        return RetryPolicy(maxAttempts: options.fetchAttempts, baseDelay: delay, maxDelay: max(delay, 30))
    }
}
