import Foundation
import MapIO
import Synchronization

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

    /// `map` for synchronous code: `items` through `body` on `width` threads (this one and `BlockingPool`
    /// ones), the results in input order. Items are taken in order and none is started once one has
    /// failed; of the items that failed, the first by position gives the error, so the same items give
    /// the same error whichever thread met it first.
    package static func mapWaiting<Item: Sendable, T: Sendable>(_ items: [Item], width: Int, _ body: @escaping @Sendable (Item) throws -> T) throws
        -> [T]
    {
        let next = Atomic<Int>(0)
        let failed = Atomic<Bool>(false)
        let results = Mutex([Result<T, any Error>?](repeating: nil, count: items.count))
        @Sendable func work() {
            while !failed.load(ordering: .acquiring) {
                let index = next.add(1, ordering: .relaxed).oldValue
                guard index < items.count else { return }
                let result = Result { try body(items[index]) }
                if case .failure = result { failed.store(true, ordering: .releasing) }
                results.withLock { $0[index] = result }
            }
        }
        let helpers = (1..<max(1, min(width, items.count))).map { _ in BlockingPool.start { work() } }
        work()
        for helper in helpers { try helper.value() }
        // Every item before the first failure ran; none after it is needed.
        var values: [T] = []
        for result in results.withLock({ $0 }) {
            guard let result else { break }
            values.append(try result.get())
        }
        return values
    }
}
