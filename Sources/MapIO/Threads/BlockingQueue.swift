import Foundation

/// A first-in, first-out queue between threads: producers `push` from anywhere (callbacks
/// included), consumers on their own threads `pop`, waiting while it is empty and open. Lets a
/// fixed set of worker threads run item after item without a task hop per item.
///
/// With a `capacity`, at most that many items wait: a producer then waits for room, so memory
/// does not grow with the work when consumers fall behind.
///
/// `@unchecked Sendable`: every mutable field is read and written only while `condition` is locked.
package final class BlockingQueue<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    /// Waiting items from `head` on; slots before it are handed out and emptied (nil), so the
    /// queue never keeps what a consumer took, even when it never runs empty.
    private var items: [Element?] = []
    private var head = 0
    private var closed = false
    private var cancelled = false
    /// Consumers waiting in `pop` right now.
    private var waiting = 0
    private let capacity: Int

    /// A queue holding at most `capacity` waiting items (unbounded by default).
    package init(capacity: Int = .max) {
        precondition(capacity > 0, "a queue needs room for one item")
        self.capacity = capacity
    }

    /// Adds `item`, waiting for room in a bounded queue. Once the queue is closed or cancelled the
    /// item is dropped. Returns whether it was taken, how many items were then queued and how many
    /// consumers were waiting for one (so a pool can tell whether to start another consumer).
    @discardableResult
    package func push(_ item: Element) -> (taken: Bool, queued: Int, waiting: Int) {
        condition.lock()
        defer { condition.unlock() }
        while items.count - head >= capacity && !closed && !cancelled { condition.wait() }
        let taken = !closed && !cancelled
        if taken { items.append(item) }
        // Producers and consumers share one condition in a bounded queue: wake them all.
        if capacity == .max { condition.signal() } else { condition.broadcast() }
        return (taken, items.count - head, waiting)
    }

    /// No more items: consumers get what is left, then nil. With `discarding`, what is left is dropped.
    package func close(discarding: Bool = false) {
        condition.lock()
        closed = true
        if discarding {
            items.removeAll()
            head = 0
        }
        condition.broadcast()
        condition.unlock()
    }

    /// Stops the producers (`push` drops its item and returns at once, also when it waits for
    /// room); consumers still get what waits, and `isCancelled` tells them to skip it. The queue
    /// ends (nil from `pop`) once it is also closed.
    package func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    package var isCancelled: Bool {
        condition.lock()
        defer { condition.unlock() }
        return cancelled
    }

    /// The next item, waiting for one while the queue is open; nil once it is closed and empty.
    package func pop() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while head == items.count && !closed {
            waiting += 1
            condition.wait()
            waiting -= 1
        }
        guard head < items.count else { return nil }
        let item = items[head].take()
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024, head * 2 >= items.count {
            // Never empty: drop the spent slots before the array grows with the work.
            items.removeFirst(head)
            head = 0
        }
        // A producer may be waiting for the room just made.
        if capacity != .max { condition.broadcast() }
        return item
    }
}
