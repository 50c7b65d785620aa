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
    /// Progress, state changes, completion or failure; finishes when the task completes, fails or is cancelled.
    ///
    /// Each read is a consumer of its own that gets every event of the task, as each `MapStore.events()`
    /// stream gets every store event: any number of consumers may watch one task. A consumer that starts
    /// after the task did first gets the events sent before (a run of progress reports of one region as the
    /// latest of them), then the rest as they come.
    public var events: AsyncStream<DownloadEvent> { log.stream() }

    enum Phase: Equatable {
        case running, pausing, paused
        /// Fetched; the install runs to its commit: a pause, a cancel or a stop is too late.
        case installing
        /// Stopped because the task awaiting `MapStore.download(regions:progress:)` was cancelled:
        /// fetched bytes are kept and the regions are `paused`, but the task ends.
        case stopping
        case cancelling, finished
    }

    struct Control: ~Copyable {
        var phase: Phase = .running
        var runner: Task<Void, Never>?
    }

    /// The task's events, for every consumer of `events`.
    let log = DownloadEventLog()
    let control = Mutex(Control())
    /// The end, and who awaits it.
    let completion = TaskCompletion()
    let store: MapStore

    init(store: MapStore, regions: [RegionID]) {
        self.store = store
        self.regions = regions
    }

    /// Starts (or restarts after a pause) the work.
    func start() {
        let runner = Task { [self] in await store.runDownload(self) }
        control.withLock { $0.runner = runner }
    }

    /// True while the download is paused.
    public var isPaused: Bool { phase == .paused }

    /// Stops the transfers, keeping what was fetched; regions move to `paused`. True when the task pauses (or
    /// is paused already); false when it cannot: its install has begun and runs to its commit (the regions
    /// become `completed` and `wait()` returns), or it ended or is being cancelled.
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

    /// Continues a paused download from the bytes already fetched.
    public func resume() {
        let restart = control.withLock { control -> Bool in
            guard control.phase == .paused else { return false }
            control.phase = .running
            return true
        }
        if restart { start() }
    }

    /// Stops the download and removes its fetched data; the regions return to `available`. Too late once the
    /// install has begun (see `pause()`): the download then completes.
    public func cancel() {
        let (runner, cleanUpNow) = control.withLock { control -> (Task<Void, Never>?, Bool) in
            switch control.phase {
            case .running, .pausing:
                control.phase = .cancelling
                return (control.runner, false)
            case .paused:
                control.phase = .cancelling
                return (nil, true)
            case .installing, .stopping, .cancelling, .finished: return (nil, false)
            }
        }
        runner?.cancel()
        if cleanUpNow {
            Task { [self] in
                store.cleanUpCancelled(self)
                finish(.failure(.cancelled))
            }
        }
    }

    /// Stops the download keeping what was fetched (the regions become `paused`, as after a pause, so a
    /// later download resumes them) and ends the task: `wait()` throws `MapStoreError.cancelled`.
    func stop() {
        let (runner, endNow) = control.withLock { control -> (Task<Void, Never>?, Bool) in
            switch control.phase {
            case .running, .pausing:
                control.phase = .stopping
                return (control.runner, false)
            case .paused:
                control.phase = .stopping
                return (nil, true)
            case .installing, .stopping, .cancelling, .finished: return (nil, false)
            }
        }
        runner?.cancel()
        // Paused already: the regions are `paused` and the bytes kept; only the end is left.
        if endNow { finish(.failure(.cancelled)) }
    }

    /// Waits until every region is installed; throws the failure, or `MapStoreError.cancelled`.
    /// While paused, keeps waiting for `resume()` or `cancel()`.
    public func wait() async throws(MapStoreError) {
        try await completion.wait(storage: store.storageFolder)
    }

    /// The phase now (the runner reads it after a cancellation to tell pause from cancel).
    var phase: Phase { control.withLock { $0.phase } }

    /// Moves a running task to `installing`, after which a pause, a cancel or a stop is too late; false when
    /// one came in first (the runner then settles the task as that one asks).
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

    /// Claims a paused task for finishing because its regions were installed by other work; false
    /// when it is no longer paused (resumed or cancelled meanwhile: that path finishes it).
    func completeElsewhere() -> Bool {
        control.withLock { control -> Bool in
            guard control.phase == .paused else { return false }
            control.phase = .finished
            return true
        }
    }

    func emit(_ event: DownloadEvent) {
        log.send(event)
        store.forward(event, of: self)
    }

    func finish(_ outcome: Result<Void, MapStoreError>) {
        store.liveTasks.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(self)) }
        control.withLock { $0.phase = .finished }
        if case .failure(let error) = outcome {
            if case .cancelled = error {} else { emit(.failed(error)) }
        }
        log.finish()
        completion.finish(outcome)
    }
}
