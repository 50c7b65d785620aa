import Foundation

/// Runs blocking work (file I/O, fsync, libarchive, curl's easy interface) on a thread of its
/// own instead of the cooperative pool.
enum OffThread {
    /// Runs `body` on a new thread and returns its result.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
            }
            thread.stackSize = 4 << 20
            thread.start()
        }
    }
}
