import Foundation

/// Runs blocking work (hashing a partial file, fsync, rename, waiting on a lock) on a fresh thread,
/// so the Swift cooperative pool never blocks on disk.
enum Offload {
    /// The value of `body`, computed on its own thread.
    static func run<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.name = "mappack-io"
            thread.start()
        }
    }
}
