/// The phases of a task that fetches and then installs, and can be paused, resumed, cancelled or
/// stopped on the way (`DownloadTask`, `UpdateTask`), with every move between them in one place.
///
/// A value kept under one lock (`TaskControl`). A transition changes the phase and says what the
/// caller does once the lock is let go (cancel a run, settle a paused task), except making a run:
/// `start` and `resume` make it while the lock is held, so a `pause()` or `cancel()` that comes in
/// at the same moment always finds the run it must stop.
struct TaskStateMachine: ~Copyable {
    /// Where a task is.
    enum Phase: Equatable {
        /// A run fetches.
        case running
        /// A pause came in; the run is stopping and will mark the task `paused`.
        case pausing
        /// No run; the fetched bytes are kept for `resume()`.
        case paused
        /// Fetched; the install runs to its commit: a pause, a cancel or a stop is too late.
        case installing
        /// Stopped because the task awaiting the async call (`MapStore.download(regions:progress:)`,
        /// `MapStore.update`) was cancelled: fetched bytes are kept, but the task ends.
        case stopping
        /// Cancelled: what was fetched is removed, and the task ends.
        case cancelling
        /// Ended: completed, failed or settled after a stop or a cancel.
        case finished
    }

    /// How `stop(_:)` ends a task.
    enum Ending {
        /// Remove what was fetched (`cancel()`).
        case cancel
        /// Keep what was fetched for a later task (the awaiting Swift task was cancelled).
        case keepFetchedBytes

        var phase: Phase {
            switch self {
            case .cancel: .cancelling
            case .keepFetchedBytes: .stopping
            }
        }
    }

    /// What the caller of `stop(_:)` does once the lock is let go.
    enum StopAction {
        /// Nothing: the task is installing or has ended, or a stop came in before.
        case none
        /// Cancel this run (if any); the run settles the task as the phase says when it ends.
        case cancelRun(Task<Void, Never>?)
        /// No run: the caller settles the paused task and finishes it.
        case settle
    }

    private(set) var phase: Phase = .running
    /// The current (or last) run.
    private var run: Task<Void, Never>?

    /// Starts the first run, made by `makeRun`.
    mutating func start(_ makeRun: () -> Task<Void, Never>) {
        phase = .running
        run = makeRun()
    }

    /// Moves a paused task back to `running` with a new run made by `makeRun`; false (and no run
    /// made) when the task is not paused.
    mutating func resume(_ makeRun: () -> Task<Void, Never>) -> Bool {
        guard phase == .paused else { return false }
        phase = .running
        run = makeRun()
        return true
    }

    /// Asks a running task to pause. `pausing` is true when it pauses (or is pausing or paused
    /// already), false when it cannot: it installs, ended or is being stopped. `cancel` is the run
    /// the caller cancels.
    mutating func pause() -> (pausing: Bool, cancel: Task<Void, Never>?) {
        switch phase {
        case .running:
            phase = .pausing
            return (true, run)
        case .pausing, .paused: return (true, nil)
        case .installing, .stopping, .cancelling, .finished: return (false, nil)
        }
    }

    /// Ends a running, pausing or paused task as `ending` says.
    mutating func stop(_ ending: Ending) -> StopAction {
        switch phase {
        case .running, .pausing:
            phase = ending.phase
            return .cancelRun(run)
        case .paused:
            phase = ending.phase
            return .settle
        case .installing, .stopping, .cancelling, .finished: return .none
        }
    }

    /// Moves a running task to `installing`, after which a pause, a cancel or a stop is too late;
    /// false when one came in first (the run then settles the task as that one asks).
    mutating func beginInstall() -> Bool {
        guard phase == .running else { return false }
        phase = .installing
        return true
    }

    /// Moves a pausing task to `paused` as its run ends; false when a cancel or stop came in meanwhile.
    mutating func markPaused() -> Bool {
        guard phase == .pausing else { return false }
        phase = .paused
        return true
    }

    /// Claims a paused task for finishing because its work was done by other work; false when it
    /// is no longer paused (resumed or stopped meanwhile: that path finishes it).
    mutating func completeElsewhere() -> Bool {
        guard phase == .paused else { return false }
        phase = .finished
        return true
    }

    /// The task ended.
    mutating func finish() {
        phase = .finished
    }
}
