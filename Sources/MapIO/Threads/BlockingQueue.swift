import Foundation

/// A first-in, first-out queue between threads: producers `push` from anywhere (callbacks
/// included), consumers on `BlockingPool` threads `pop`, waiting while it is empty and open.
/// Lets a fixed set of worker threads run item after item without a task hop per item.
package final class BlockingQueue<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element] = []
    private var head = 0
    private var closed = false
    /// Consumers waiting in `pop` right now.
    private var waiting = 0

    package init() {}

    /// Adds `item`, unless the queue was closed. Returns how many items were then queued and how many
    /// consumers were waiting for one (so a pool can tell whether to start another consumer).
    @discardableResult
    package func push(_ item: Element) -> (queued: Int, waiting: Int) {
        condition.lock()
        defer { condition.unlock() }
        if !closed { items.append(item) }
        condition.signal()
        return (items.count - head, waiting)
    }

    /// No more items: consumers get what is left, then nil. With `discarding`, what is left is dropped.
    package func close(discarding: Bool = false) {
        condition.lock()
        closed = true
        if discarding { items.removeAll(); head = 0 }
        condition.broadcast()
        condition.unlock()
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
        let item = items[head]
        head += 1
        if head == items.count { items.removeAll(keepingCapacity: true); head = 0 }
        return item
    }
}
