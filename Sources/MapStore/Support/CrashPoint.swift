import Foundation
import Synchronization

/// Test hook: named points in install, delete, move and cache import where a test can have the
/// process killed with SIGKILL, to prove every interruption is detected and repaired.
///
/// Compiled in only with `MAPPACK_TEST_HOOKS` (debug builds, see `Package.swift`): in the release
/// library an app ships, `reach` is empty, its name is never built and no environment is read. In a
/// debug build it is active only when the environment variable `MAPSTORE_CRASH_AT` (or
/// `MAPSTORE_STOP_AT`) names the point; when unset `reach` is two comparisons against nil.
package enum CrashPoint {
    #if !MAPPACK_TEST_HOOKS
        /// Nothing: a release build holds no test hooks.
        @inline(__always)
        static func reach(_ name: @autoclosure () -> String) {}

        /// Nothing: a release build holds no test hooks.
        @inline(__always)
        static func reach(_ name: @autoclosure () -> String, storage: @autoclosure () -> String) {}
    #else
        /// The point named by `MAPSTORE_CRASH_AT`, read once.
        private static let armed: String? = ProcessInfo.processInfo.environment["MAPSTORE_CRASH_AT"]

        /// The point named by `MAPSTORE_STOP_AT`, read once: there the process stops itself (SIGSTOP) and goes
        /// on when the test continues it (SIGCONT), to hold a `mappack store` process midway, e.g. while a
        /// second process on the same storage shows it waits.
        private static let stopAt: String? = ProcessInfo.processInfo.environment["MAPSTORE_STOP_AT"]

        /// Kills the process with SIGKILL (no cleanup, no buffered I/O flushed) when `name` is armed, or
        /// stops it (SIGSTOP) when `name` is the stop point.
        static func reach(_ name: @autoclosure () -> String) {
            guard stopAt != nil || armed != nil else { return }
            let name = name()
            if let stopAt, stopAt == name { kill(getpid(), SIGSTOP) }
            guard let armed, armed == name else { return }
            kill(getpid(), SIGKILL)
        }

        /// Test hook, called with the point's name and the storage folder at points that name one; a test
        /// blocks in it to hold an operation midway (e.g. to show readers do not wait for it). Nil in apps.
        package static let pauseHook = Mutex<(@Sendable (_ name: String, _ storage: String) -> Void)?>(nil)

        /// Test hooks by storage folder (absolute path), called with the point's name at points that name
        /// one: a test holds or cancels the work on its own storage while other tests run beside it. Empty in apps.
        package static let storageHooks = Mutex<[String: @Sendable (_ name: String) -> Void]>([:])

        /// `reach(name)`, then the pause hook and the storage's hook when set.
        static func reach(_ name: @autoclosure () -> String, storage: @autoclosure () -> String) {
            let (name, storage) = (name(), storage())
            reach(name)
            if let hook = pauseHook.withLock({ $0 }) { hook(name, storage) }
            if let hook = storageHooks.withLock({ $0[storage] }) { hook(name) }
        }
    #endif
}
