import Foundation

/// Runs `body` on a thread of its own, as an app's UI thread would call the store, so a busy loop never
/// takes one of the cooperative pool's threads from the update it measures.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.stackSize = 1 << 20
        thread.start()
    }
}
