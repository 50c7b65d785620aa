import Foundation
import MapIO
import Synchronization
import Testing

@Suite struct BlockingQueueTests {
    @Test func everyItemReachesExactlyOneConsumerAndCloseEndsThem() async throws {
        let queue = BlockingQueue<Int>()
        let consumers = (0..<3).map { _ in
            Task {
                try await BlockingPool.run { () -> [Int] in
                    var got: [Int] = []
                    while let item = queue.pop() { got.append(item) }
                    return got
                }
            }
        }
        await withTaskGroup(of: Void.self) { producers in
            for p in 0..<4 { producers.addTask { for i in 0..<500 { queue.push(p * 1000 + i) } } }
        }
        queue.close()
        var all: [Int] = []
        for consumer in consumers { all += try await consumer.value }
        var expected: [Int] = []
        for p in 0..<4 { for i in 0..<500 { expected.append(p * 1000 + i) } }
        #expect(all.sorted() == expected)
    }

    /// A queue that never runs empty (the producer stays ahead, as verify's walker does of a slow
    /// copy) must not keep the items it has handed out: they held open folders, and an install of
    /// a 36,000-folder image ran out of descriptors.
    @Test func poppedItemsAreReleasedWhileTheQueueNeverEmpties() {
        final class Held: Sendable {}
        let queue = BlockingQueue<Held>(capacity: 4)
        var handedOut: [Weak] = []
        queue.push(Held())
        for _ in 0..<1000 {
            queue.push(Held())
            if let item = queue.pop() { handedOut.append(Weak(item)) }
        }
        #expect(handedOut.count == 1000)
        #expect(handedOut.filter { $0.object != nil }.count == 0, "items handed out are still held by the queue")
        #expect(queue.pop() != nil)
    }

    private struct Weak {
        weak var object: AnyObject?
        init(_ object: AnyObject) { self.object = object }
    }

    @Test func closingWithDiscardDropsWhatIsLeftAndRefusesMore() {
        let queue = BlockingQueue<String>()
        queue.push("a")
        queue.push("b")
        #expect(queue.pop() == "a")
        queue.close(discarding: true)
        queue.push("c")
        #expect(queue.pop() == nil)
    }

    /// `push` reports what a pool needs to decide on another thread: items queued, consumers waiting.
    @Test func pushCountsQueuedItemsAndWaitingConsumers() async throws {
        let queue = BlockingQueue<Int>()
        #expect(queue.push(1) == (true, 1, 0))
        #expect(queue.push(2) == (true, 2, 0))
        #expect(queue.pop() == 1 && queue.pop() == 2)
        // A consumer that takes items until -1: between items it waits in `pop`, which a push then sees.
        let consumer = Task {
            await BlockingPool.value { () -> Int in
                var taken = 0
                while let item = queue.pop(), item != -1 { taken += 1 }
                return taken
            }
        }
        var pushed = 0
        var seenWaiting = false
        while !seenWaiting && pushed < 500 {
            try await Task.sleep(for: .milliseconds(10))
            seenWaiting = queue.push(pushed).waiting == 1
            pushed += 1
        }
        #expect(seenWaiting)
        queue.push(-1)
        #expect(await consumer.value == pushed)
    }

    /// A bounded queue holds a producer back until a consumer makes room, and keeps the order.
    @Test func boundedQueueMakesTheProducerWaitForRoom() async throws {
        let queue = BlockingQueue<Int>(capacity: 2)
        let pushed = Atomic<Int>(0)
        let producer = Task {
            await BlockingPool.value { () -> Int in
                var taken = 0
                for item in 0..<10 where queue.push(item).taken {
                    taken += 1
                    pushed.add(1, ordering: .sequentiallyConsistent)
                }
                queue.close()
                return taken
            }
        }
        // Nothing is taken yet: the producer gets two items in, and no third however long it runs.
        for _ in 0..<500 where pushed.load(ordering: .sequentiallyConsistent) < 2 { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(pushed.load(ordering: .sequentiallyConsistent) == 2)
        var got: [Int] = []
        while let item = queue.pop() { got.append(item) }
        #expect(got == Array(0..<10))
        #expect(await producer.value == 10)
    }

    /// Cancelling wakes a producer waiting for room: its item is dropped, consumers still get what waits.
    @Test func cancelReleasesAWaitingProducerAndKeepsWhatWaits() async throws {
        let queue = BlockingQueue<Int>(capacity: 1)
        #expect(queue.push(1).taken)
        let producer = Task { await BlockingPool.value { queue.push(2).taken } }
        try await Task.sleep(for: .milliseconds(50))
        queue.cancel()
        #expect(await producer.value == false)
        #expect(queue.isCancelled)
        queue.close()
        #expect(queue.pop() == 1)
        #expect(queue.pop() == nil)
    }
}
