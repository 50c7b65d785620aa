import Dispatch
import Synchronization

/// The bounded hand-over between the thread that walks the store and reads the manifest, and
/// the threads that hash: at most `capacity` batches wait, so memory does not grow with the file
/// count, and the producer waits when the hashers fall behind.
final class FileCheckQueue: Sendable {
    private struct State {
        var waiting: [FileCheckBatch] = []
        var spare: [FileCheckBatch] = []
        var cancelled = false
    }

    private let state = Mutex(State())
    /// Counts batches waiting (plus one per consumer at close).
    private let filled = DispatchSemaphore(value: 0)
    /// Counts free places.
    private let room: DispatchSemaphore

    init(capacity: Int) { room = DispatchSemaphore(value: capacity) }

    /// An empty batch, reused when one is spare.
    func emptyBatch() -> FileCheckBatch {
        state.withLock { $0.spare.popLast() } ?? FileCheckBatch()
    }

    /// Hands `batch` over, waiting for room.
    func put(_ batch: FileCheckBatch) {
        room.wait()
        state.withLock { $0.waiting.append(batch) }
        filled.signal()
    }

    /// The next batch, waiting for one; nil once the queue is closed and empty. After
    /// `cancel()`, batches are still handed out but `isCancelled` says to skip them.
    func take() -> FileCheckBatch? {
        filled.wait()
        let batch: FileCheckBatch? = state.withLock { state in
            state.waiting.isEmpty ? nil : state.waiting.removeFirst()
        }
        guard let batch else {
            // Only `close()` signals without a batch: wake the next consumer too.
            filled.signal()
            return nil
        }
        room.signal()
        return batch
    }

    /// Gives a checked batch back for reuse.
    func recycle(_ batch: consuming FileCheckBatch) {
        var batch = batch
        batch.removeAll()
        state.withLock { [batch] in $0.spare.append(batch) }
    }

    /// No more batches will come.
    func close() { filled.signal() }

    /// Asks consumers to skip what is left.
    func cancel() { state.withLock { $0.cancelled = true } }

    var isCancelled: Bool { state.withLock { $0.cancelled } }
}
