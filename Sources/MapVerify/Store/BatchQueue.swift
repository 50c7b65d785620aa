import Dispatch
import MapIO
import Synchronization

/// A batch of work a `BatchQueue` carries and hands back for reuse.
protocol ReusableBatch: Sendable {
    init()
    /// Empties the batch, keeping its buffers.
    mutating func removeAll()
}

/// The bounded hand-over of batches between threads: at most `capacity` wait, so memory does not
/// grow with the work, and a producer waits when its consumers fall behind. Handing work over in
/// batches keeps locking rare; batches come back for reuse, so their buffers are allocated once.
final class BatchQueue<Batch: ReusableBatch>: Sendable {
    private struct State {
        var waiting: [Batch] = []
        var spare: [Batch] = []
        var cancelled = false
    }

    private let state = Mutex(State())
    /// Counts batches waiting (plus one per consumer at close).
    private let filled = DispatchSemaphore(value: 0)
    /// Counts free places.
    private let room: DispatchSemaphore
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        room = DispatchSemaphore(value: capacity)
    }

    /// An empty batch, reused when one is spare.
    func emptyBatch() -> Batch {
        state.withLock { $0.spare.popLast() } ?? Batch()
    }

    /// Hands `batch` over, waiting for room; false, dropping it, once the queue is cancelled.
    @discardableResult
    func put(_ batch: Batch) -> Bool {
        room.wait()
        let taken = state.withLock { state in
            guard !state.cancelled else { return false }
            state.waiting.append(batch)
            return true
        }
        if taken { filled.signal() }
        return taken
    }

    /// The next batch, waiting for one; nil once the queue is closed and empty.
    func take() -> Batch? {
        filled.wait()
        let batch: Batch? = state.withLock { state in state.waiting.isEmpty ? nil : state.waiting.removeFirst() }
        guard let batch else {
            // Only `close()` signals without a batch: wake the next consumer too.
            filled.signal()
            return nil
        }
        room.signal()
        return batch
    }

    /// Gives a used batch back for reuse.
    func recycle(_ batch: consuming Batch) {
        var batch = batch
        batch.removeAll()
        state.withLock { [batch] in $0.spare.append(batch) }
    }

    /// No more batches will come.
    func close() { filled.signal() }

    /// Stops the producer (`put` returns false, waking it if it waits for room); consumers still
    /// get what waits, and `isCancelled` tells them to skip it.
    func cancel() {
        state.withLock { $0.cancelled = true }
        for _ in 0..<capacity { room.signal() }
    }

    var isCancelled: Bool { state.withLock { $0.cancelled } }
}
