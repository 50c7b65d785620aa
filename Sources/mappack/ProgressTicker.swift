import Dispatch
import Foundation
import Synchronization

/// Keeps a status line coming while work goes on, so no phase looks frozen: on a terminal the
/// line is redrawn four times a second (the seconds in it move); off a terminal (CI logs) each
/// phase's first line is printed, then a status line whenever the last line is `interval` seconds
/// old. Nothing with `--json` (the events say it) or `--quiet`.
final class ProgressTicker: Sendable {
    private let terminal: Terminal
    private let interval: TimeInterval
    private let lastLine = Mutex(Date())
    private let status: (@Sendable () -> String?)?
    /// The line last given to `set`, for tickers made without a status closure.
    private let latest = Mutex<String?>(nil)
    /// Nil when no progress is shown; made only then, since libdispatch traps on releasing a
    /// source that was never resumed.
    private nonisolated(unsafe) let timer: (any DispatchSourceTimer)?

    /// Off a terminal a progress line every 5 s (1 s with `--verbose`); `MAPPACK_PROGRESS_INTERVAL`
    /// (seconds) overrides it, for tests.
    static func interval(terminal: Terminal) -> TimeInterval {
        if let text = ProcessInfo.processInfo.environment["MAPPACK_PROGRESS_INTERVAL"], let value = Double(text), value > 0, value <= 3600 {
            return value
        }
        return terminal.verbose ? 1 : 5
    }

    /// Starts ticking; `status` gives the current line, nil while there is nothing to say. Without
    /// it, the line is the last one given to `set`.
    init(terminal: Terminal, status: (@Sendable () -> String?)? = nil) {
        self.terminal = terminal
        self.status = status
        interval = ProgressTicker.interval(terminal: terminal)
        guard terminal.showsProgress else {
            unsafe timer = nil
            return
        }
        let timer = DispatchSource.makeTimerSource(queue: .global())
        unsafe self.timer = timer
        let period = terminal.isTTY ? 0.25 : interval
        timer.schedule(deadline: .now() + period, repeating: period, leeway: .milliseconds(50))
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.resume()
    }

    deinit { unsafe timer?.cancel() }

    /// A phase starts: its first line, printed at once.
    func started(_ headline: String) {
        lastLine.withLock { $0 = Date() }
        if terminal.isTTY { terminal.progress(headline, force: true) } else { terminal.log(headline) }
    }

    /// A new status: redrawn on a terminal (at most 10 times a second); off one, the ticks print it.
    func update(_ line: @autoclosure () -> String) {
        if terminal.isTTY { terminal.progress(line()) }
    }

    /// A new status, kept for the ticks off a terminal and redrawn on one.
    func set(_ line: String) {
        latest.withLock { $0 = line }
        update(line)
    }

    /// Stops ticking and clears a redrawn line.
    func finish() {
        unsafe timer?.cancel()
        terminal.finishProgress()
    }

    private func tick() {
        if !terminal.isTTY {
            let due = lastLine.withLock { last -> Bool in
                guard Date().timeIntervalSince(last) >= interval * 0.9 else { return false }
                last = Date()
                return true
            }
            guard due else { return }
        }
        guard let line = status?() ?? latest.withLock({ $0 }) else { return }
        if terminal.isTTY { terminal.progress(line) } else { terminal.log(line) }
    }
}
