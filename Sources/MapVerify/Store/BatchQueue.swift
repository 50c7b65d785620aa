import MapIO
import Synchronization

/// A batch of work a `BatchQueue` carries and hands back for reuse.
protocol ReusableBatch: Sendable {
    init()
    /// Empties the batch, keeping its buffers.
    mutating func removeAll()
}

/// A bounded `BlockingQueue` of batches whose used batches come back for reuse, so their buffers
/// are allocated once. Handing work over in batches keeps locking rare; the bound keeps memory
/// flat when consumers fall behind.
final class BatchQueue<Batch: ReusableBatch>: Sendable {
    private let queue: BlockingQueue<Batch>
    private let spare = Mutex<[Batch]>([])

    init(capacity: Int) { queue = BlockingQueue(capacity: capacity) }

    /// An empty batch, reused when one is spare.
    func emptyBatch() -> Batch {
        spare.withLock { $0.popLast() } ?? Batch()
    }

    /// Hands `batch` over, waiting for room; false, dropping it, once the queue is cancelled.
    @discardableResult
    func put(_ batch: Batch) -> Bool { queue.push(batch).taken }

    /// The next batch, waiting for one; nil once the queue is closed and empty.
    func take() -> Batch? { queue.pop() }

    /// Gives a used batch back for reuse.
    func recycle(_ batch: consuming Batch) {
        var batch = batch
        batch.removeAll()
        spare.withLock { [batch] in $0.append(batch) }
    }

    /// No more batches will come.
    func close() { queue.close() }

    /// Stops the producer (see `BlockingQueue.cancel`).
    func cancel() { queue.cancel() }

    var isCancelled: Bool { queue.isCancelled }
}
