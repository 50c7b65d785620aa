import Foundation
import MapFormat
import Synchronization

/// One update of the installed regions to a catalog's newer map version: pause, resume, cancel, wait.
///
/// Pausing stops the transfers and keeps the bytes fetched so far in the storage's download cache
/// (the updating regions become `paused`, still installed and usable at the old version);
/// `resume()`, or a later update to the same catalog (also after the process was killed), continues
/// from them without fetching them again. Cancelling removes what the update fetched and returns the
/// regions to `outdated`. Once the fetch is done the install runs to its commit: a pause or a cancel
/// that arrives then is too late, and the update completes (`pause()` says so by returning false). Progress arrives on `MapStore.events()`
/// (`.updateProgress` for the whole update, `.progress` for each updating region) and through
/// `MapStore.progress(of:)`.
///
/// The task holds its store; the store holds a paused task only weakly. An app that lets go of a
/// paused update and of its store frees both (and the store's files and database); the regions stay
/// `paused` with the fetched bytes kept, and an update to the same catalog by a store opened later
/// continues from them.
public final class UpdateTask: Sendable {
    /// The catalog the update installs from (nil: the store's remembered catalog).
    public let catalog: URL?
    /// The store's catalog it updates (nil: the one `catalog` serves, else the image's).
    public let catalogID: CatalogID?

    /// What a run recorded for a later pause or cancel.
    struct Recorded: Sendable {
        /// Bundles the update fetches, for a cancel's clean-up.
        var bundles: Set<BundleDigest> = []
        /// Installed regions the update marked `downloading` (then `paused`).
        var regions: [RegionID] = []
    }

    let control = TaskControl()
    private let recording = Mutex(Recorded())
    /// The end, and who awaits it.
    let completion = TaskCompletion()
    let store: MapStore
    /// The caller's progress callback (`MapStore.update(catalog:progress:)`).
    let progress: @Sendable (UpdateProgress) -> Void

    init(store: MapStore, catalog: URL?, catalogID: CatalogID? = nil, progress: @escaping @Sendable (UpdateProgress) -> Void) {
        self.store = store
        self.catalog = catalog
        self.catalogID = catalogID
        self.progress = progress
    }

    /// Starts the work.
    func start() { control.start { [self] in await store.runUpdate(self) } }

    /// True while the update is paused.
    public var isPaused: Bool { phase == .paused }

    /// Stops the transfers, keeping what was fetched; the updating regions move to `paused`. True when the update
    /// pauses (or is paused already); false when it cannot: its install has begun and runs to its commit (the
    /// new version is installed and `wait()` returns), or it ended or is being cancelled.
    @discardableResult
    public func pause() -> Bool {
        pausedByNetwork.store(false, ordering: .relaxed)
        return control.pause()
    }

    /// Continues a paused update from the bytes already fetched.
    public func resume() {
        pausedByNetwork.store(false, ordering: .relaxed)
        _ = control.resume { [self] in await store.runUpdate(self) }
    }

    /// Paused by `MapStore.networkChanged(metered:)` (not by the app): resumed when the network permits
    /// fetching again.
    let pausedByNetwork = Atomic<Bool>(false)

    /// Stops the update and removes what it fetched (bundles no download task needs); the regions
    /// return to `outdated`. `wait()` throws `MapStoreError.cancelled`.
    public func cancel() { stop(keepingFetchedBytes: false) }

    /// Stops the update; `keepingFetchedBytes` leaves the fetched bytes for a later update to resume from.
    func stop(keepingFetchedBytes: Bool) {
        guard control.stop(keepingFetchedBytes ? .keepFetchedBytes : .cancel) else { return }
        // Paused: no run settles it, so this does, as a run would have.
        Task { [self] in await store.settle(self, failure: .cancelled, cancelled: true, store.updateSettling(self, recording: true)) }
    }

    /// Waits until the new version is installed; throws the failure, or `MapStoreError.cancelled`.
    /// While paused, keeps waiting for `resume()` or `cancel()`.
    public func wait() async throws(MapStoreError) {
        try await completion.wait(storage: store.storageFolder)
    }

    /// The phase now (the runner reads it after a cancellation to tell pause from cancel).
    var phase: TaskStateMachine.Phase { control.phase }

    /// Records what the run fetches and which regions it marked, for a later pause or cancel.
    func record(bundles: Set<BundleDigest>, regions: [RegionID]) {
        recording.withLock { $0 = Recorded(bundles: bundles, regions: regions) }
    }

    /// What the run recorded.
    var recorded: Recorded { recording.withLock { $0 } }

    func finish(_ outcome: Result<Void, MapStoreError>) {
        store.runtime.withLock { $0.finished(update: self) }
        control.finish()
        completion.finish(outcome)
    }
}
