import Foundation
import Synchronization

/// Hands every event to every live consumer: each `stream()` is an `AsyncStream` of its own
/// (unbounded buffer, so a slow consumer never makes the store wait), dropped when its consumer stops.
final class EventBroadcaster: Sendable {
    private let consumers = Mutex<(next: Int, continuations: [Int: AsyncStream<StoreEvent>.Continuation])>((0, [:]))

    /// A new stream that receives every event sent from now on.
    func stream() -> AsyncStream<StoreEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: StoreEvent.self, bufferingPolicy: .unbounded)
        let key = consumers.withLock { state -> Int in
            state.next += 1
            state.continuations[state.next] = continuation
            return state.next
        }
        continuation.onTermination = { [weak self] _ in self?.consumers.withLock { _ = $0.continuations.removeValue(forKey: key) } }
        return stream
    }

    /// Sends `event` to every consumer.
    func send(_ event: StoreEvent) {
        let continuations = consumers.withLock { Array($0.continuations.values) }
        for continuation in continuations { continuation.yield(event) }
    }

    deinit {
        for continuation in consumers.withLock({ Array($0.continuations.values) }) { continuation.finish() }
    }
}
