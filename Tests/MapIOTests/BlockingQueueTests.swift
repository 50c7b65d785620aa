import Foundation
import MapIO
import Testing

@Suite struct BlockingQueueTests {
    @Test func everyItemReachesExactlyOneConsumerAndCloseEndsThem() async throws {
        let queue = BlockingQueue<Int>()
        let consumers = (0..<3).map { _ in
            Task { try await BlockingPool.run { () -> [Int] in
                var got: [Int] = []
                while let item = queue.pop() { got.append(item) }
                return got
            } }
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

    @Test func closingWithDiscardDropsWhatIsLeftAndRefusesMore() {
        let queue = BlockingQueue<String>()
        queue.push("a")
        queue.push("b")
        #expect(queue.pop() == "a")
        queue.close(discarding: true)
        queue.push("c")
        #expect(queue.pop() == nil)
    }
}
