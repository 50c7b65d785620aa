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

    enum Phase: Equatable {
        case running, pausing, paused
        /// Fetched; the install runs to its commit: a pause, a cancel or a stop is too late.
        case installing
        /// Stopped because the task awaiting `MapStore.update` was cancelled: fetched bytes are kept.
        case stopping
        case cancelling, finished
    }

    struct Control: ~Copyable {
        var phase: Phase = .running
        var runner: Task<Void, Never>?
        /// Bundles the update fetches, for a cancel's clean-up.
        var bundles: Set<BundleDigest> = []
        /// Installed regions the update marked `downloading` (then `paused`).
        var regions: [RegionID] = []
    }

    let control = Mutex(Control())
    /// The end, and who awaits it.
    let completion = TaskCompletion()
    let store: MapStore
    /// The caller's progress callback (`MapStore.update(catalog:progress:)`).
    let progress: @Sendable (UpdateProgress) -> Void

    init(store: MapStore, catalog: URL?, progress: @escaping @Sendable (UpdateProgress) -> Void) {
        self.store = store
        self.catalog = catalog
        self.progress = progress
    }

    /// Starts the work. The runner is made under the lock, so a `pause()` or `cancel()` arriving at the
    /// same time always finds the runner it must stop.
    func start() {
        control.withLock { control in control.runner = Task { [self] in await store.runUpdate(self) } }
    }

    /// True while the update is paused.
    public var isPaused: Bool { phase == .paused }

    /// Stops the transfers, keeping what was fetched; the updating regions move to `paused`. True when the update
    /// pauses (or is paused already); false when it cannot: its install has begun and runs to its commit (the
    /// new version is installed and `wait()` returns), or it ended or is being cancelled.
    @discardableResult
    public func pause() -> Bool {
        let (runner, pausing) = control.withLock { control -> (Task<Void, Never>?, Bool) in
            switch control.phase {
            case .running:
                control.phase = .pausing
                return (control.runner, true)
            case .pausing, .paused: return (nil, true)
            case .installing, .stopping, .cancelling, .finished: return (nil, false)
            }
        }
        runner?.cancel()
        return pausing
    }

    /// Continues a paused update from the bytes already fetched.
    public func resume() {
        control.withLock { control in
            guard control.phase == .paused else { return }
            control.phase = .running
            control.runner = Task { [self] in await store.runUpdate(self) }
        }
    }

    /// Stops the update and removes what it fetched (bundles no download task needs); the regions
    /// return to `outdated`. `wait()` throws `MapStoreError.cancelled`.
    public func cancel() { stop(keepingFetchedBytes: false) }

    /// Stops the update; `keepingFetchedBytes` leaves the fetched bytes for a later update to resume from.
    func stop(keepingFetchedBytes: Bool) {
        let (runner, settleNow) = control.withLock { control -> (Task<Void, Never>?, Bool) in
            switch control.phase {
            case .running, .pausing:
                control.phase = keepingFetchedBytes ? .stopping : .cancelling
                return (control.runner, false)
            case .paused:
                control.phase = keepingFetchedBytes ? .stopping : .cancelling
                return (nil, true)
            case .installing, .stopping, .cancelling, .finished: return (nil, false)
            }
        }
        runner?.cancel()
        if settleNow {
            Task { [self] in
                store.settleStoppedUpdate(self, keepingFetchedBytes: keepingFetchedBytes)
                finish(.failure(.cancelled))
            }
        }
    }

    /// Waits until the new version is installed; throws the failure, or `MapStoreError.cancelled`.
    /// While paused, keeps waiting for `resume()` or `cancel()`.
    public func wait() async throws(MapStoreError) {
        try await completion.wait(storage: store.storageFolder)
    }

    /// The phase now (the runner reads it after a cancellation to tell pause from cancel).
    var phase: Phase { control.withLock { $0.phase } }

    /// Moves a running update to `installing`, after which a pause, a cancel or a stop is too late; false
    /// when one came in first (the runner then settles the update as that one asks).
    func beginInstall() -> Bool {
        control.withLock { control -> Bool in
            guard control.phase == .running else { return false }
            control.phase = .installing
            return true
        }
    }

    /// Moves a pausing task to `paused`; false when a cancel or stop came in meanwhile.
    func markPaused() -> Bool {
        control.withLock { control -> Bool in
            guard control.phase == .pausing else { return false }
            control.phase = .paused
            return true
        }
    }

    /// Records what the run fetches and which regions it marked, for a later pause or cancel.
    func record(bundles: Set<BundleDigest>, regions: [RegionID]) {
        control.withLock { control in
            control.bundles = bundles
            control.regions = regions
        }
    }

    /// What the run recorded.
    var recorded: (bundles: Set<BundleDigest>, regions: [RegionID]) { control.withLock { ($0.bundles, $0.regions) } }

    func finish(_ outcome: Result<Void, MapStoreError>) {
        store.liveUpdate.withLock { live in if live.task === self { live.task = nil } }
        control.withLock { $0.phase = .finished }
        completion.finish(outcome)
    }
}
