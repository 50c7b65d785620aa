import Foundation

/// Long-lived threads for blocking work (file I/O, fsync, libarchive, zstd, SQLite, curl's easy
/// interface), so async code never blocks the cooperative pool and never pays a thread start per job.
///
/// A job runs on an idle thread; when none is idle a new one starts (up to `maxThreads`, after which
/// jobs wait in order). Threads stay for the life of the process.
package final class BlockingPool: @unchecked Sendable {
    /// The process-wide pool.
    package static let shared = BlockingPool(maxThreads: 64)

    private let condition = NSCondition()
    private let maxThreads: Int
    private var jobs: [@Sendable () -> Void] = []
    private var head = 0
    private var threads = 0
    private var idle = 0

    init(maxThreads: Int) { self.maxThreads = max(1, maxThreads) }

    /// Queues `job`.
    package func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        let waiting = jobs.count - head
        let startThread = waiting > idle && threads < maxThreads
        if startThread { threads += 1 }
        condition.signal()
        condition.unlock()
        if startThread {
            let thread = Thread { [self] in work() }
            thread.name = "mappack-blocking"
            thread.stackSize = 4 << 20
            thread.start()
        }
    }

    private func work() {
        condition.lock()
        while true {
            while head == jobs.count {
                idle += 1
                condition.wait()
                idle -= 1
            }
            let job = jobs[head]
            head += 1
            if head == jobs.count { jobs.removeAll(keepingCapacity: true); head = 0 }
            condition.unlock()
            job()
            condition.lock()
        }
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
