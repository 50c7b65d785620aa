import Synchronization

/// The point of no return of a build: the moment before its first output is renamed into place.
///
/// A stop request (SIGINT, SIGTERM) and the builder race for it under one lock, so exactly one
/// wins: a stop that comes first ends the build with nothing published; one that comes after
/// finds the outputs already going into place, and the build completes and says so.
package final class PublishGate: Sendable {
    private enum State { case working, stopping, publishing }
    private let state = Mutex(State.working)

    package init() {}

    /// Asks the build to stop; false when it is already publishing (too late to stop it cleanly).
    package func requestStop() -> Bool {
        state.withLock { state in
            switch state {
            case .working, .stopping:
                state = .stopping
                return true
            case .publishing: return false
            }
        }
    }

    /// Called by the builder right before its first rename into place; throws when a stop was
    /// requested (or the task cancelled) before that.
    package func enterPublishing() throws(CancellationError) {
        let stopped = state.withLock { state -> Bool in
            if state == .stopping || Task.isCancelled {
                state = .stopping
                return true
            }
            state = .publishing
            return false
        }
        if stopped { throw CancellationError() }
    }
}
