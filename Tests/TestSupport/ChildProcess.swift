import Foundation
import Synchronization

/// A child process its deadline killed: it hung, and the test that waited for it fails with this.
public struct ChildTimeoutError: Error, CustomStringConvertible {
    /// The command line.
    public let command: String
    /// The deadline, in seconds after the start.
    public let seconds: TimeInterval

    public var description: String {
        "\(command): still running \(Int(seconds)) s after it started, so it was killed (SIGKILL); it hung, or waited for something that never came"
    }
}

/// A child process a test starts and drives while it runs (reads its pipes, signals it), with a
/// deadline: once it passes, a watchdog kills the child (SIGKILL), which also ends every read of
/// its pipes, and `wait` throws `ChildTimeoutError`. A hung child fails its test instead of hanging
/// the suite. Nothing here sleeps: the end of the child is a semaphore the termination handler
/// signals. `Tool.run` is this for a child a test only waits for.
public final class ChildProcess: @unchecked Sendable {
    /// The process; set its standard input, output and error before `start`.
    public let process = Process()
    /// Seconds it may run (nil: until stopped, for a server its owner stops).
    public let timeout: TimeInterval?
    /// What the termination handler and the deadlines share: not the `Process`, so a deadline
    /// waiting to fire keeps no pipe open.
    private let watch = Watch()

    private final class Watch: Sendable {
        let state = Mutex(State())
        /// Signalled once the child has ended (and left signalled by every wait).
        let exited = DispatchSemaphore(value: 0)
    }

    private struct State {
        var started = false
        var exited = false
        /// The seconds after which a deadline killed it, if one did.
        var killedAfter: TimeInterval?
        var pid: Int32 = 0
    }

    /// A child running `executable` (a path, or the name of one of the package's executables) with
    /// `arguments`, the test's environment plus `environment`, in `directory`.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], in directory: String? = nil,
        timeout: TimeInterval? = Tool.defaultTimeout
    ) {
        process.executableURL = URL(fileURLWithPath: executable.hasPrefix("/") ? executable : Tool.path(executable))
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        var merged = ProcessInfo.processInfo.environment
        merged["SWIFT_BACKTRACE"] = "enable=no"
        for (key, value) in environment { merged[key] = value }
        process.environment = merged
        self.timeout = timeout
    }

    /// The command line, for messages.
    public var command: String { ([process.executableURL?.lastPathComponent ?? "?"] + (process.arguments ?? [])).joined(separator: " ") }

    /// The child's process id.
    public var pid: Int32 { process.processIdentifier }

    /// Whether it has been started and not yet ended.
    public var isRunning: Bool { watch.state.withLock { $0.started && !$0.exited } }

    /// How it ended (after `wait`).
    public var terminationStatus: Int32 { process.terminationStatus }
    /// Whether it exited or was killed by a signal (after `wait`).
    public var terminationReason: Process.TerminationReason { process.terminationReason }

    /// Starts the child and its deadline.
    public func start() throws {
        process.terminationHandler = { [watch] _ in
            watch.state.withLock { $0.exited = true }
            watch.exited.signal()
        }
        try process.launchAlone()
        let pid = process.processIdentifier
        watch.state.withLock {
            $0.started = true
            $0.pid = pid
        }
        if let timeout { killIfRunning(after: timeout) }
    }

    /// Kills the child (SIGKILL) when it is still running `seconds` from now, counting as its
    /// deadline (`wait` throws): for a test's own wait that is shorter than the child's life, such as
    /// a server's first line. Cancel the returned item when that wait is over.
    @discardableResult
    public func killIfRunning(after seconds: TimeInterval) -> DispatchWorkItem {
        // Holds the watch, not the child: one a test dropped still dies at its deadline.
        let item = DispatchWorkItem { [watch] in
            watch.state.withLock { state in
                guard state.started, !state.exited else { return }
                state.killedAfter = seconds
                kill(state.pid, SIGKILL)
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: item)
        return item
    }

    /// Sends `number` to the child unless it has ended (its id may then be another process's).
    public func signal(_ number: Int32) {
        watch.state.withLock { state in
            if state.started && !state.exited { kill(state.pid, number) }
        }
    }

    /// Waits for the child to end; throws `ChildTimeoutError` when its deadline killed it. Without a
    /// timeout, only `stop` bounds the wait.
    public func wait() throws(ChildTimeoutError) {
        waitForExit()
        if let seconds = watch.state.withLock({ $0.killedAfter }) { throw ChildTimeoutError(command: command, seconds: seconds) }
    }

    /// Waits at most `seconds` for the child to end; false when it is still running.
    public func wait(atMost seconds: TimeInterval) -> Bool {
        guard watch.exited.wait(timeout: .now() + seconds) == .success else { return false }
        watch.exited.signal()
        process.waitUntilExit()
        return true
    }

    /// SIGTERM, then SIGKILL when it is still there after `grace` seconds; returns once it has ended.
    public func stop(grace: TimeInterval = 3) {
        guard watch.state.withLock({ $0.started }) else { return }
        signal(SIGTERM)
        if !wait(atMost: grace) {
            signal(SIGKILL)
            waitForExit()
        }
    }

    private func waitForExit() {
        watch.exited.wait()
        // Left signalled: every later wait returns at once.
        watch.exited.signal()
        process.waitUntilExit()
    }
}

/// Child processes start one at a time in a test process (taking turns costs nothing measurable).
/// That alone did not stop the crash it was for: `Process.run()` of this toolchain's Foundation
/// (swift-corelibs-foundation before its fix #5472) copies each `/proc/self/fd` entry as a whole
/// `dirent`, reading up to 256 bytes past the entry, and with about 1,350 descriptors open the last
/// entries sit at the end of readdir's 32 KiB buffer: `memcpy` then crossed into an unmapped page now
/// and then (a clean-clone CI run; a run under load here, with 2,400 open, most of them folders a
/// store check held). So a start with that many open is refused with the count instead.
private let launches = Mutex(())

/// Open descriptors above which `Process.run()` may crash (see `launches`), with a margin.
let safeDescriptorCount = 1200

extension Process {
    /// `run()`, while no other test of this process starts a child; throws instead when so many
    /// descriptors are open that Foundation's start could crash the test process.
    public func launchAlone() throws {
        try launches.withLock { _ in
            let open = openDescriptors()
            if open > safeDescriptorCount {
                throw TooManyOpenFiles(open: open, command: executableURL?.lastPathComponent ?? "?")
            }
            try run()
        }
    }
}

/// Entries of `/proc/self/fd`, counted without reading them (no copy of an entry: see `launches`).
private func openDescriptors() -> Int {
    guard let folder = unsafe opendir("/proc/self/fd") else { return 0 }
    defer { unsafe closedir(folder) }
    var count = 0
    while unsafe readdir(folder) != nil { count += 1 }
    return count
}

/// A child not started because the test process had too many descriptors open (see `launches`).
public struct TooManyOpenFiles: Error, CustomStringConvertible {
    public let open: Int
    public let command: String
    public var description: String {
        "\(command) was not started: the test process has \(open) descriptors open (more than \(safeDescriptorCount)), "
            + "where Foundation's Process.run() can read past its /proc/self/fd buffer and crash the whole run; "
            + "a test leaks descriptors, or holds too many at once"
    }
}
