import Dispatch
import Foundation
import MapBuild
import Synchronization

/// Turns SIGINT and SIGTERM into cancellation of one task, so a build stops cleanly: partial
/// downloads stay for the next run, the staging folder is removed, nothing looks finished.
enum Interrupts {
    /// The signal that interrupted the work, if any.
    static let received = Mutex<Int32?>(nil)

    /// Runs `work` as a task that SIGINT/SIGTERM cancel; a second signal exits at once. With a
    /// `gate`, a signal that comes once the outputs are going into place no longer stops the work:
    /// it says so, and the work completes. `progress` stops moving at the signal and says it.
    static func cancellable<T: Sendable>(
        gate: PublishGate? = nil, progress: BuildProgress, _ work: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        // The handlers are in place before the work starts: a signal that came between the work's
        // first output and the handlers' start was ignored (SIG_IGN) and the build ran on to publish.
        let running = Mutex<Task<T, any Error>?>(nil)
        let stop: @Sendable () -> Void = {
            if gate?.requestStop() == false {
                progress.say("interrupted while publishing: too late to stop; the outputs are being completed (a second signal exits at once)")
            } else {
                progress.stopping(progress.interruptMessage)
                running.withLock { $0?.cancel() }
            }
        }
        let sources: [any DispatchSourceSignal]
        if runWatched.load(ordering: .acquiring) {
            runAction.withLock { $0 = { _ in stop() } }
            sources = []
        } else {
            sources = watch(first: stop)
        }
        let task = Task { try await work() }
        running.withLock { $0 = task }
        // A signal before the task existed cancels it now.
        if received.withLock({ $0 }) != nil { task.cancel() }
        defer { for source in sources { source.cancel() } }
        do { return try await task.value } catch {
            if let number = received.withLock({ $0 }) { throw InterruptedError(signal: number, outcome: InterruptedError.buildOutcome) }
            throw error
        }
    }

    /// What the first SIGINT or SIGTERM does while `watchRun`'s sources live; `cancellable` sets it.
    private static let runAction = Mutex<(@Sendable (Int32) -> Void)?>(nil)
    /// True while `watchRun`'s sources live: `cancellable` then sets `runAction` instead of watching
    /// anew (of two sources for one signal only one is told, and one cancelled while another is made
    /// can take the new one's signals with it: a build then ran through Ctrl-C).
    private static let runWatched = Atomic<Bool>(false)

    /// Watches SIGINT and SIGTERM for a whole run (a build: its catalog download and plan, then the
    /// build proper, whose `cancellable` takes over): the first calls `first` with its number until
    /// `cancellable` gives it its own action; a second exits at once. Keep the sources to the run's end.
    static func watchRun(first: @escaping @Sendable (Int32) -> Void) -> [any DispatchSourceSignal] {
        runAction.withLock { $0 = first }
        runWatched.store(true, ordering: .releasing)
        return watch {
            let number = received.withLock { $0 } ?? SIGINT
            runAction.withLock { $0 }?(number)
        }
    }

    /// Watches SIGINT and SIGTERM (ignored otherwise while the sources live): the first one is recorded
    /// in `received` and calls `first`; a second one exits at once. Cancel the sources when done.
    static func watch(first: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                let isFirst = received.withLock { previous -> Bool in
                    defer { previous = previous ?? number }
                    return previous == nil
                }
                if isFirst { first() } else { exit(ExitCode.interrupted(by: number).rawValue) }
            }
            source.resume()
            sources.append(source)
        }
        return sources
    }
}

/// Work stopped cleanly by SIGINT or SIGTERM: exit code 128 + the signal, as a shell reports a death by
/// it (130 for Ctrl-C), after saying what was kept and how to go on.
struct InterruptedError: Error, CustomStringConvertible {
    let signal: Int32
    /// What the stop left and how to go on.
    let outcome: String

    /// A build's: nothing published, downloads kept.
    static let buildOutcome = "nothing was published; run the same command again (bundles already downloaded are kept)"

    var description: String { "interrupted by \(signal == SIGINT ? "SIGINT" : "SIGTERM"); \(outcome)" }
}
