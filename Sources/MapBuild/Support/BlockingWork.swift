import Foundation
import Synchronization

/// Runs blocking work (file I/O, libarchive, zstd) on dedicated threads instead of the
/// cooperative pool, with at most `width` items in flight.
package enum BlockingWork {
    /// Runs `body` on a new thread and returns its result.
    package static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
            }
            thread.stackSize = 4 << 20
            thread.start()
        }
    }

    /// Maps `items` through `body` with `width` threads, keeping the input order; the first error wins.
    package static func map<Item: Sendable, T: Sendable>(_ items: [Item], width: Int, _ body: @escaping @Sendable (Item) throws -> T) async throws -> [T] {
        try await withThrowingTaskGroup(of: (Int, T).self) { group in
            var results = [T?](repeating: nil, count: items.count)
            var next = 0
            for _ in 0..<min(max(1, width), items.count) {
                let index = next, item = items[index]
                group.addTask { (index, try await run { try body(item) }) }
                next += 1
            }
            while let (index, value) = try await group.next() {
                results[index] = value
                if next < items.count {
                    let index2 = next, item = items[index2]
                    group.addTask { (index2, try await run { try body(item) }) }
                    next += 1
                }
            }
            return results.map { $0! }
        }
    }
}
