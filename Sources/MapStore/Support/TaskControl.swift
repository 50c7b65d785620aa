import Synchronization

/// A `TaskStateMachine` under its lock, for a `DownloadTask` or an `UpdateTask`: each call makes one
/// transition and then, with the lock let go, cancels the run it returned.
///
/// The body of a run is passed to each call that makes one rather than kept, so a task does not hold
/// itself through its control (a paused task an app lets go of is freed).
final class TaskControl: Sendable {
    private let machine = Mutex(TaskStateMachine())

    /// The phase now (a run reads it after a cancellation to tell pause from cancel).
    var phase: TaskStateMachine.Phase { machine.withLock { $0.phase } }

    /// Starts the first run of `body`.
    func start(_ body: @escaping @Sendable () async -> Void) {
        machine.withLock { machine in machine.start { Task(operation: body) } }
    }

    /// Starts a new run of `body` when the task is paused; false when it is not.
    func resume(_ body: @escaping @Sendable () async -> Void) -> Bool {
        machine.withLock { machine in machine.resume { Task(operation: body) } }
    }

    /// Pauses a running task (`TaskStateMachine.pause()`), cancelling its run.
    func pause() -> Bool {
        let (pausing, run) = machine.withLock { $0.pause() }
        run?.cancel()
        return pausing
    }

    /// Ends the task as `ending` says, cancelling its run; true when it was paused, with no run: the
    /// caller then settles and finishes it.
    func stop(_ ending: TaskStateMachine.Ending) -> Bool {
        switch machine.withLock({ $0.stop(ending) }) {
        case .none: return false
        case .cancelRun(let run):
            run?.cancel()
            return false
        case .settle: return true
        }
    }

    /// `TaskStateMachine.beginInstall()`.
    func beginInstall() -> Bool { machine.withLock { $0.beginInstall() } }

    /// `TaskStateMachine.markPaused()`.
    func markPaused() -> Bool { machine.withLock { $0.markPaused() } }

    /// `TaskStateMachine.completeElsewhere()`.
    func completeElsewhere() -> Bool { machine.withLock { $0.completeElsewhere() } }

    /// `TaskStateMachine.finish()`.
    func finish() { machine.withLock { $0.finish() } }
}
