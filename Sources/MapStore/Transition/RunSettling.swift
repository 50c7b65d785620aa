/// What a stopped run of a task does at each end `StoreRuntime.settlement` may choose: the task's own
/// part of the one settling rule both downloads and updates follow (`MapStore.settle`).
struct RunSettling: Sendable {
    /// Records the task's regions `paused` before the task is marked paused.
    var recordPaused: @Sendable () async throws -> Void
    /// Announces that the task paused (after it is marked paused, so a consumer that resumes on it finds it paused).
    var announcePaused: @Sendable () -> Void
    /// Ends a stopped task, keeping its fetched bytes for a later one.
    var endKeepingBytes: @Sendable () async throws -> Void
    /// Ends a cancelled task, removing its fetched bytes that no other task claims.
    var endRemovingBytes: @Sendable () async throws -> Void
    /// Ends a failed task (its failure is its end).
    var failed: @Sendable (MapStoreError) async throws -> Void
}

/// A task the settling rule ends: a `DownloadTask` or an `UpdateTask`.
protocol SettledTask: AnyObject, Sendable {
    var control: TaskControl { get }
    func finish(_ outcome: Result<Void, MapStoreError>)
}

extension DownloadTask: SettledTask {}
extension UpdateTask: SettledTask {}

extension MapStore {
    /// Ends `task`'s run that stopped with `failure` (`cancelled`: by a pause, a stop or a cancel), as
    /// `StoreRuntime.settlement` decides from the task's phase; `steps` does the task's part. A pause
    /// that a stop or a cancel overtook settles again as that one. When a step fails (the state could
    /// not be written), the task ends with that failure (a failed task with its own failure, the cause):
    /// nothing is said that did not happen.
    func settle(_ task: some SettledTask, failure: MapStoreError, cancelled: Bool, _ steps: RunSettling) async {
        var settlement = Runtime.settlement(cancelled: cancelled, phase: task.control.phase)
        do {
            if settlement == .pause {
                try await steps.recordPaused()
                if task.control.markPaused() {
                    steps.announcePaused()
                    return
                }
                settlement = Runtime.settlement(cancelled: true, phase: task.control.phase)
            }
            switch settlement {
            case .pause, .endKeepingBytes:
                try await steps.endKeepingBytes()
                task.finish(.failure(.cancelled))
            case .endRemovingBytes:
                try await steps.endRemovingBytes()
                task.finish(.failure(.cancelled))
            case .fail:
                try await steps.failed(failure)
                task.finish(.failure(failure))
            }
        } catch {
            task.finish(.failure(settlement == .fail ? failure : MapStoreError.wrapping(error, operation: "settle", path: storageFolder)))
        }
    }
}
