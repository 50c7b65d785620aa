import Foundation
import Synchronization

/// Long-lived threads for blocking work (file I/O, fsync, libarchive, zstd, SQLite, curl's easy
/// interface), so async code never blocks the cooperative pool and never pays a thread start per job.
///
/// A job runs on an idle thread; when none is idle a new one starts (up to `maxThreads`, after which
/// jobs wait in order). Threads stay for the life of the process.
package final class BlockingPool: Sendable {
    /// The process-wide pool.
    package static let shared = BlockingPool(maxThreads: 64)

    private let jobs = BlockingQueue<@Sendable () -> Void>()
    private let maxThreads: Int
    private let threads = Mutex(0)

    init(maxThreads: Int) { self.maxThreads = max(1, maxThreads) }

    /// Queues `job`; starts a thread when more jobs wait than idle threads do (up to `maxThreads`).
    package func submit(_ job: @escaping @Sendable () -> Void) {
        let (_, queued, waiting) = jobs.push(job)
        guard queued > waiting else { return }
        let start = threads.withLock { count -> Bool in
            guard count < maxThreads else { return false }
            count += 1
            return true
        }
        guard start else { return }
        let thread = Thread { [self] in
            // The queue is never closed: pool threads live as long as the process.
            while let job = jobs.pop() { job() }
        }
        thread.name = "mappack-blocking"
        thread.stackSize = 4 << 20
        thread.start()
    }

    /// Runs `body` on a pool thread and returns its result.
    package static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            shared.submit { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Runs `body`, which cannot fail, on a pool thread and returns its result.
    package static func value<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            shared.submit { continuation.resume(returning: body()) }
        }
    }

    /// Starts `body` on a pool thread and returns at once; `PendingResult.value()` waits for it.
    /// For synchronous code that has a second, independent piece of work to overlap with its own.
    package static func start<T: Sendable>(_ body: @escaping @Sendable () throws -> T) -> PendingResult<T> {
        let pending = PendingResult<T>()
        shared.submit { pending.deliver(Result { try body() }) }
        return pending
    }
}

/// The result of `BlockingPool.start`, delivered once by the pool thread.
package final class PendingResult<T: Sendable>: Sendable {
    private let channel = BlockingQueue<Result<T, any Error>>()

    fileprivate init() {}

    fileprivate func deliver(_ result: Result<T, any Error>) {
        channel.push(result)
        channel.close()
    }

    /// Waits for the result. Call once: a second call throws `CancellationError`.
    package func value() throws -> T {
        guard let result = channel.pop() else { throw CancellationError() }
        return try result.get()
    }
}
