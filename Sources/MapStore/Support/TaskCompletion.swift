import Synchronization

/// How a download or update task ended, and the callers awaiting that: the `wait()` of
/// `DownloadTask` and `UpdateTask`, any number of them, before or after the end.
final class TaskCompletion: Sendable {
    private struct State {
        var outcome: Result<Void, MapStoreError>?
        var waiters: [CheckedContinuation<Void, any Error>] = []
    }

    private let state = Mutex(State())

    /// Returns once `finish` has been called (at once when it has): throws the failure it was given.
    func wait(storage: String) async throws(MapStoreError) {
        try await MapStoreError.boundary("wait", path: storage) {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, MapStoreError>? in
                    if state.outcome == nil { state.waiters.append(waiter) }
                    return state.outcome
                }
                if let outcome { waiter.resume(with: outcome.mapError { $0 as any Error }) }
            }
        }
    }

    /// Records `outcome` and resumes every waiter with it.
    func finish(_ outcome: Result<Void, MapStoreError>) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.outcome = outcome
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(with: outcome.mapError { $0 as any Error }) }
    }
}
