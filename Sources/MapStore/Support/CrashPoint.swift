import Foundation

/// Test hook: named points in install, delete, move and cache import where a test can have the
/// process killed with SIGKILL, to prove every interruption is detected and repaired.
///
/// Active only when the environment variable `MAPSTORE_CRASH_AT` names the point; apps never set
/// it, and when it is unset `reach` is a dictionary-free string comparison against nil.
enum CrashPoint {
    /// The point named by `MAPSTORE_CRASH_AT`, read once.
    private static let armed: String? = ProcessInfo.processInfo.environment["MAPSTORE_CRASH_AT"]

    /// Kills the process with SIGKILL (no cleanup, no buffered I/O flushed) when `name` is armed.
    static func reach(_ name: String) {
        guard let armed, armed == name else { return }
        kill(getpid(), SIGKILL)
    }
}
