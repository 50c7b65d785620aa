import Foundation
import MapFormat
import MapIO
import Synchronization

/// Steering downloads by region id, as Yandex's `stopDownload(regionId)` / `drop(regionId)` do, and the
/// network policy applied to transfers under way (issue 40 items 5 and 6).
extension MapStore {
    /// Pauses the downloads under way that fetch `region` (asked for it, or for a region it descends
    /// from), keeping what they fetched; the regions become `paused`. True when one pauses (or is paused
    /// already); false when none fetches it, or its install has begun and runs to its commit.
    @discardableResult
    public func pauseDownload(_ region: RegionID) -> Bool {
        downloads(fetching: region).reduce(false) { paused, task in task.pause() || paused }
    }

    /// Continues the downloads of `region` that are paused, from the bytes already fetched; when no live
    /// task holds it but it is `paused` (paused by a process that ended, or a task the app let go of),
    /// starts a download of it that resumes from those bytes. Returns the tasks, empty when nothing of
    /// `region` was paused.
    @discardableResult
    public func resumeDownload(_ region: RegionID) throws(MapStoreError) -> [DownloadTask] {
        let tasks = downloads(fetching: region).filter(\.isPaused)
        if !tasks.isEmpty {
            for task in tasks { task.resume() }
            return tasks
        }
        guard Self.pausedDownload(region, in: snapshot) else { return [] }
        return [try download(regions: [region])]
    }

    /// Cancels the downloads of `region` (asked for it, or for a region it descends from) and removes
    /// what they fetched; the regions return to `available`. A `paused` region no live task holds has its
    /// fetched bytes removed the same way. Returns when the cancelled downloads have ended; true when
    /// anything was cancelled. Too late for a download whose install has begun (it completes). Throws
    /// when a cancelled download's fetched bytes or rows could not be removed (`MapStoreError.local`).
    @discardableResult
    public func cancelDownload(_ region: RegionID) async throws(MapStoreError) -> Bool {
        try await MapStoreError.boundary("cancelDownload", path: storageFolder) {
            let tasks = downloads(fetching: region)
            for task in tasks { task.cancel() }
            for task in tasks {
                do { try await task.wait() } catch MapStoreError.cancelled {
                    // Cancelled as asked; another end (it completed, its clean-up failed) is the caller's to know.
                }
            }
            if !tasks.isEmpty { return true }
            guard Self.pausedDownload(region, in: snapshot) else { return false }
            let orphan = DownloadTask(store: self, regions: [region])
            try await BlockingPool.run { [self] in try cleanUpCancelled(orphan) }
            return true
        }
    }

    /// Whether `region` is a paused download in `snapshot` (fetched bytes kept, not installed), whether or
    /// not a live task holds it.
    static func pausedDownload(_ region: RegionID, in snapshot: StoreSnapshot) -> Bool {
        snapshot.states[region] == .paused && !snapshot.regions.contains { $0.id == region }
    }

    /// The live download tasks whose regions (with their catalog descendants) include `region`.
    func downloads(fetching region: RegionID) -> [DownloadTask] {
        let tasks = runtime.withLock { $0.liveDownloads }
        let catalogs = catalogsOf(snapshot)
        return tasks.filter { task in
            task.regions.contains(region) || task.regions.contains { offering($0, in: catalogs)?.subtree($0).contains(region) ?? false }
        }
    }

    /// Tells the store the device's network changed, as the app's reachability monitor sees it (on Apple
    /// systems `NWPath.isExpensive`; on Android the lack of `NET_CAPABILITY_NOT_METERED`). The store's one
    /// fact about the network (`isNetworkMetered`, first `Options.networkIsMetered`), which `networkPolicy`
    /// is held against for downloads, updates and repair alike.
    ///
    /// Applies to transfers under way: when the policy no longer permits fetching, running downloads and
    /// the running update pause (their fetched bytes kept, their regions `paused`); when it permits
    /// fetching again, the ones it paused resume. Consumers of `events()` hear `.networkChanged` with
    /// what was paused or resumed. An automatic update that waits because the network was metered
    /// (`StoreEvent.updateDeferred`) starts when the app reports an unmetered network.
    public func networkChanged(metered: Bool) {
        let changed = autoUpdates.metered != metered
        let recheck = autoUpdates.report(metered: metered)
        var change = NetworkChange(metered: metered, fetchingPermitted: networkPermitsFetching)
        let (live, update) = runtime.withLock { ($0.liveDownloads, $0.liveUpdate) }
        let tasks = live.sorted { $0.regions.lexicographicallyPrecedes($1.regions) }
        if !change.fetchingPermitted {
            for task in tasks where task.phase == .running && task.pause() {
                task.pausedByNetwork.store(true, ordering: .relaxed)
                change.pausedDownloads += task.regions
            }
            if let update, update.phase == .running, update.pause() {
                update.pausedByNetwork.store(true, ordering: .relaxed)
                change.pausedUpdate = true
            }
        } else {
            for task in tasks where task.pausedByNetwork.exchange(false, ordering: .relaxed) {
                task.resume()
                change.resumedDownloads += task.regions
            }
            if let update, update.pausedByNetwork.exchange(false, ordering: .relaxed) {
                update.resume()
                change.resumedUpdate = true
            }
        }
        if changed || change.changedTransfers { broadcaster.send(.networkChanged(change)) }
        guard recheck, autoUpdate else { return }
        Task { [weak self] in await self?.runAutomaticCheck() }
    }
}

/// What a `networkChanged(metered:)` report did (`StoreEvent.networkChanged`): the network as reported,
/// whether the policy permits fetching on it, and the transfers it paused or resumed. A struct, so a
/// later field does not break an app's code.
public struct NetworkChange: Sendable, Equatable {
    /// The network is metered, as the app reported.
    public var metered: Bool
    /// `MapStore.networkPolicy` permits downloads and updates on it.
    public var fetchingPermitted: Bool
    /// The requested regions of the downloads it paused (they resume when fetching is permitted again).
    public var pausedDownloads: [RegionID] = []
    /// The requested regions of the downloads it resumed (ones an earlier report paused).
    public var resumedDownloads: [RegionID] = []
    /// It paused the running update.
    public var pausedUpdate = false
    /// It resumed the update an earlier report paused.
    public var resumedUpdate = false

    /// A change of the network as reported, with nothing paused or resumed yet.
    public init(metered: Bool, fetchingPermitted: Bool) {
        self.metered = metered
        self.fetchingPermitted = fetchingPermitted
    }

    /// Whether it paused or resumed anything.
    var changedTransfers: Bool { !pausedDownloads.isEmpty || !resumedDownloads.isEmpty || pausedUpdate || resumedUpdate }
}
