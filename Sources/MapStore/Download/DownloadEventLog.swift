import MapFormat
import Synchronization

/// A download task's events for any number of consumers, as `MapStore.events()` hands the store's to
/// each of its consumers: every `stream()` gets every event. A task's events are few and the task ends,
/// so a consumer that starts late is not left without the start: it first gets what was sent before it
/// (a run of progress reports of one region as its latest), then follows live, and ends with the task.
final class DownloadEventLog: Sendable {
    private struct State {
        var history: [DownloadEvent] = []
        var finished = false
        var next = 0
        var consumers: [Int: AsyncStream<DownloadEvent>.Continuation] = [:]
    }

    private let state = Mutex(State())

    /// A new consumer's stream: the events so far, then each one sent from now on; finished with the task.
    func stream() -> AsyncStream<DownloadEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DownloadEvent.self, bufferingPolicy: .unbounded)
        let key = state.withLock { state -> Int? in
            // Under the lock, so no event is sent between the replay and the registration.
            for event in state.history { continuation.yield(event) }
            guard !state.finished else { return nil }
            state.next += 1
            state.consumers[state.next] = continuation
            return state.next
        }
        guard let key else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.consumers.removeValue(forKey: key) } }
        return stream
    }

    /// Sends `event` to every consumer, in one order for all of them, and keeps it for later ones.
    func send(_ event: DownloadEvent) {
        state.withLock { state in
            guard !state.finished else { return }
            if case .progress(let region, _, _) = event, case .progress(region, _, _)? = state.history.last {
                state.history[state.history.count - 1] = event
            } else {
                state.history.append(event)
            }
            // `yield` never calls back into this log (a consumer's termination handler runs on its own side).
            for continuation in state.consumers.values { continuation.yield(event) }
        }
    }

    /// Ends every consumer's stream; later consumers get the events and an end.
    func finish() {
        let consumers = state.withLock { state -> [AsyncStream<DownloadEvent>.Continuation] in
            state.finished = true
            defer { state.consumers = [:] }
            return Array(state.consumers.values)
        }
        // Outside the lock: finishing runs each stream's termination handler, which takes it.
        for continuation in consumers { continuation.finish() }
    }
}
