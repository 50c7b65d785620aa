import MapFormat
import Synchronization

/// One run-time download of regions (with their descendants): pause, resume, cancel, and events.
///
/// Pausing stops the transfers and keeps the bytes fetched so far in the storage's download
/// cache; `resume()`, or a later `MapStore.download` of the same regions (also after the process
/// was killed), continues from them. Cancelling removes the fetched data and returns the regions
/// to `available`.
///
/// The task holds its store; the store holds a paused task only weakly. An app that lets go of a
/// paused download and of its store frees both; the regions stay `paused` with the fetched bytes
/// kept, and a download of them by a store opened later resumes from those bytes.
public final class DownloadTask: Sendable {
    /// The regions asked for.
    public let regions: [RegionID]
    /// The catalog named for them (nil: the one whose kept copy offers them).
    public let catalog: CatalogID?
    /// Progress, state changes, completion or failure; finishes when the task completes, fails or is cancelled.
    ///
    /// Each read is a consumer of its own that gets every event of the task, as each `MapStore.events()`
    /// stream gets every store event: any number of consumers may watch one task. A consumer that starts
    /// after the task did first gets the events sent before (a run of progress reports of one region as the
    /// latest of them), then the rest as they come.
    public var events: AsyncStream<DownloadEvent> { log.stream() }

    /// The task's events, for every consumer of `events`.
    let log = DownloadEventLog()
    let control = TaskControl()
    /// The end, and who awaits it.
    let completion = TaskCompletion()
    let store: MapStore

    init(store: MapStore, regions: [RegionID], catalog: CatalogID? = nil) {
        self.catalog = catalog
        self.store = store
        self.regions = regions
    }

    /// Starts the work.
    func start() { control.start { [self] in await store.runDownload(self) } }

    /// True while the download is paused.
    public var isPaused: Bool { phase == .paused }

    /// Where a download is, as an app steers it.
    public enum State: Sendable, Equatable {
        /// Fetching.
        case running
        /// Paused (or pausing): no transfer; the bytes fetched so far are kept for `resume()`.
        case paused
        /// Fetched; installing to its commit (a pause or a cancel is too late).
        case installing
        /// Being cancelled or stopped.
        case stopping
        /// Ended: completed, failed or cancelled (`wait()` says which).
        case finished
    }

    /// The download's state now.
    public var state: State {
        switch phase {
        case .running: .running
        case .pausing, .paused: .paused
        case .installing: .installing
        case .stopping, .cancelling: .stopping
        case .finished: .finished
        }
    }

    /// Paused by `MapStore.networkChanged(metered:)` (not by the app): resumed when the network permits
    /// fetching again.
    let pausedByNetwork = Atomic<Bool>(false)

    /// Stops the transfers, keeping what was fetched; regions move to `paused`. True when the task pauses (or
    /// is paused already); false when it cannot: its install has begun and runs to its commit (the regions
    /// become `completed` and `wait()` returns), or it ended or is being cancelled.
    @discardableResult
    public func pause() -> Bool {
        pausedByNetwork.store(false, ordering: .relaxed)
        return control.pause()
    }

    /// Continues a paused download from the bytes already fetched.
    public func resume() {
        pausedByNetwork.store(false, ordering: .relaxed)
        guard control.resume({ [self] in await store.runDownload(self) }) else { return }
        CrashPoint.reach("download.resumed", storage: store.storageFolder)
    }

    /// Stops the download and removes its fetched data; the regions return to `available`. Too late once the
    /// install has begun (see `pause()`): the download then completes.
    public func cancel() {
        // Paused: no run settles it, so this does, as a run would have.
        guard control.stop(.cancel) else { return }
        Task { [self] in await store.settle(self, failure: .cancelled, cancelled: true, store.downloadSettling(self, scope: regions, recording: true))
        }
    }

    /// Stops the download keeping what was fetched (the regions become `paused`, as after a pause, so a
    /// later download resumes them) and ends the task: `wait()` throws `MapStoreError.cancelled`.
    package func stop() {
        // Paused already: the regions are `paused` and the bytes kept; only the end is left.
        if control.stop(.keepFetchedBytes) { finish(.failure(.cancelled)) }
    }

    /// Waits until every region is installed; throws the failure, or `MapStoreError.cancelled`.
    /// While paused, keeps waiting for `resume()` or `cancel()`.
    public func wait() async throws(MapStoreError) {
        try await completion.wait(storage: store.storageFolder)
    }

    /// The phase now (the runner reads it after a cancellation to tell pause from cancel).
    var phase: TaskStateMachine.Phase { control.phase }

    func emit(_ event: DownloadEvent) {
        log.send(event)
        store.forward(event, of: self)
    }

    func finish(_ outcome: Result<Void, MapStoreError>) {
        store.runtime.withLock { $0.finished(download: self) }
        control.finish()
        if case .failure(let error) = outcome {
            if case .cancelled = error {} else { emit(.failed(error)) }
        }
        log.finish()
        completion.finish(outcome)
    }
}
