import Foundation
import MapIO

/// Blocking work (file I/O, libarchive, zstd) over many items on `BlockingPool` threads, with at
/// most `width` items in flight.
package enum BlockingWork {
    /// Maps `items` through `body` with `width` threads, keeping the input order; the first error wins.
    /// Cancelling the task ends it once the items in flight are done (`CancellationError`).
    package static func map<Item: Sendable, T: Sendable>(_ items: [Item], width: Int, _ body: @escaping @Sendable (Item) throws -> T) async throws
        -> [T]
    {
        try await withThrowingTaskGroup(of: (Int, T).self) { group in
            var results = [T?](repeating: nil, count: items.count)
            var next = 0
            for _ in 0..<min(max(1, width), items.count) {
                let index = next
                let item = items[index]
                group.addTask { (index, try await BlockingPool.run { try body(item) }) }
                next += 1
            }
            while let (index, value) = try await group.next() {
                results[index] = value
                // A pool thread does not see the task's cancellation: stop starting items here, so a
                // signal waits only for those in flight.
                try Task.checkCancellation()
                if next < items.count {
                    let index2 = next
                    let item = items[index2]
                    group.addTask { (index2, try await BlockingPool.run { try body(item) }) }
                    next += 1
                }
            }
            return results.map { $0! }
        }
    }
}
