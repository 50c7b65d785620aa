import Foundation

/// Test hook: holds a build at the start of a named phase (`manifest`, `cache seed`, `pack`,
/// `publish`; a `--shard` run has only `publish`) so a test can signal it there, at a moment it
/// chose rather than one it raced for.
///
/// Compiled in only with `MAPPACK_TEST_HOOKS` (debug builds, see `Package.swift`): a release build's
/// `reach` is empty and reads no environment. Active only when the environment variable
/// `MAPPACK_TEST_PAUSE_AT` names the phase (`BuildPhase`'s raw value). The pause lasts 30 s (or
/// `MAPPACK_TEST_PAUSE_SECONDS`, at most 30) and ends early when the task is cancelled.
enum TestPause {
    #if MAPPACK_TEST_HOOKS
        /// The phase named by `MAPPACK_TEST_PAUSE_AT`, read once.
        private static let armed: BuildPhase? = ProcessInfo.processInfo.environment["MAPPACK_TEST_PAUSE_AT"].flatMap(BuildPhase.init)
        /// The pause in hundredths of a second.
        private static let ticks: Int = {
            guard let text = ProcessInfo.processInfo.environment["MAPPACK_TEST_PAUSE_SECONDS"], let seconds = Double(text), seconds >= 0 else {
                return 3000
            }
            return Int(min(seconds, 30) * 100)
        }()

        /// Waits while `phase` is armed and the current task is not cancelled.
        static func reach(_ phase: BuildPhase) {
            guard let armed, armed == phase else { return }
            for _ in 0..<ticks where !Task.isCancelled { usleep(10_000) }
        }
    #else
        /// Nothing: a release build holds no test hooks.
        @inline(__always)
        static func reach(_ phase: BuildPhase) {}
    #endif
}
