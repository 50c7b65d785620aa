import Foundation
import Synchronization

/// A clock that moves only when the test moves it (`advance(by:)`), and tells the test when work
/// begins to wait on it (`waitForSleep(after:)`): a schedule's "nothing happened" is then a fact
/// about the clock, not a guess after a wall-clock pause.
final class ManualClock: Clock, Sendable {
    /// A point on the clock: the time advanced since it was made.
    struct Instant: InstantProtocol {
        var offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        let id: Int
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Watcher {
        let id: Int
        let after: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        /// Sleeps begun so far (each `sleep(until:)` that waits).
        var sleeps = 0
        var watchers: [Watcher] = []
        var nextID = 0
        /// Sleeps and watchers cancelled before they were registered.
        var cancelled: Set<Int> = []

        mutating func newID() -> Int {
            nextID += 1
            return nextID
        }

        /// Takes the watchers that wait for fewer sleeps than have begun.
        mutating func takeSatisfiedWatchers() -> [Watcher] {
            let ready = watchers.filter { $0.after < sleeps }
            watchers.removeAll { $0.after < sleeps }
            return ready
        }
    }

    private let state = Mutex(State())

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }

    /// Sleeps begun so far.
    var sleeps: Int { state.withLock { $0.sleeps } }

    /// Sleeps waiting now (begun, neither woken by `advance(by:)` nor cancelled).
    var waiting: Int { state.withLock { $0.sleepers.count } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { $0.newID() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (outcome, ready) = state.withLock { state -> (Result<Void, any Error>?, [Watcher]) in
                    if state.cancelled.contains(id) { return (.failure(CancellationError()), []) }
                    if deadline <= state.now { return (.success(()), []) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    state.sleeps += 1
                    return (nil, state.takeSatisfiedWatchers())
                }
                for watcher in ready { watcher.continuation.resume() }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                state.cancelled.insert(id)
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock on by `duration`, waking every sleep whose deadline it reaches.
    func advance(by duration: Duration) {
        let woken = state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let woken = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return woken
        }
        for sleeper in woken { sleeper.continuation.resume() }
    }

    /// Returns once more than `count` sleeps have begun; false when none begins within `seconds` of
    /// wall-clock time (a deadline against a hung test, not a measure).
    func waitForSleep(after count: Int, seconds: Int = 300) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.sleepBegins(after: count) }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first && !Task.isCancelled
        }
    }

    /// Returns true once more than `count` sleeps have begun, false when cancelled first.
    private func sleepBegins(after count: Int) async -> Bool {
        let id = state.withLock { $0.newID() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.sleeps > count || state.cancelled.contains(id) { return true }
                    state.watchers.append(Watcher(id: id, after: count, continuation: continuation))
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let watcher = state.withLock { state -> Watcher? in
                state.cancelled.insert(id)
                guard let index = state.watchers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.watchers.remove(at: index)
            }
            watcher?.continuation.resume()
        }
        return state.withLock { $0.sleeps > count }
    }
}
