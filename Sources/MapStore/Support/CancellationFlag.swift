import MapIO
import Synchronization

/// Swift task cancellation carried into blocking work: the work runs on a `BlockingPool` thread, where
/// `Task.isCancelled` says nothing, and polls this flag between files and phases instead.
final class CancellationFlag: Sendable {
    private let raised = Atomic<Bool>(false)

    /// Asks the work to stop at its next check.
    func cancel() { raised.store(true, ordering: .relaxed) }

    /// True once `cancel()` was called.
    var isCancelled: Bool { raised.load(ordering: .relaxed) }

    /// Throws `MapStoreError.cancelled` once `cancel()` was called.
    func check() throws(MapStoreError) {
        if isCancelled { throw MapStoreError.cancelled }
    }

    /// Runs blocking `body` on a `BlockingPool` thread (never on the cooperative pool) with a flag that
    /// cancelling the calling task raises. An already cancelled task raises it before `body` starts.
    static func runBlocking<T: Sendable>(_ body: @escaping @Sendable (CancellationFlag) throws -> T) async throws -> T {
        let flag = CancellationFlag()
        return try await withTaskCancellationHandler {
            try await BlockingPool.run {
                try flag.check()
                return try body(flag)
            }
        } onCancel: {
            flag.cancel()
        }
    }
}
