import Foundation
import MapFormat
import MapIO

/// Writes human output, progress lines and JSON events.
final class Terminal: @unchecked Sendable {
    let json: Bool
    let isTTY: Bool
    let color: Bool
    private let lock = NSLock()
    private var lastProgress = Date.distantPast
    private var progressShown = false

    /// Print only results and errors (`--quiet`): no progress, warnings or notes.
    let quiet: Bool
    /// Print more (`--verbose`): off a terminal, progress lines more often.
    let verbose: Bool

    /// Reads `--json`, `--quiet`/`-q` and `--verbose`/`-v` (also in a group like `-qv`) from a
    /// verb's arguments before they are parsed, so even a parse error is printed as asked.
    init(arguments: [String]) {
        let options = arguments.prefix { $0 != "--" }
        let shortGroups = options.filter { $0.hasPrefix("-") && !$0.hasPrefix("--") }
        json = options.contains("--json")
        quiet = options.contains("--quiet") || shortGroups.contains { $0.contains("q") }
        verbose = options.contains("--verbose") || shortGroups.contains { $0.contains("v") }
        isTTY = isatty(STDERR_FILENO) == 1
        color = isTTY && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
    }

    /// A line on standard output. Like everything `Terminal` prints for people, its control
    /// characters but LF and TAB are shown escaped (`String.visibleKeepingLines`): text from inputs
    /// cannot drive the terminal.
    func line(_ text: String) {
        lock.withLock {
            clearProgress()
            Terminal.write(Data((text.visibleKeepingLines + "\n").utf8), to: STDOUT_FILENO)
        }
    }

    /// A message on standard error (warnings, notes); nothing with `--quiet`.
    func note(_ text: String) {
        guard !quiet else { return }
        lock.withLock {
            clearProgress()
            Terminal.write(Data((text.visibleKeepingLines + "\n").utf8), to: STDERR_FILENO)
        }
    }

    /// A line on standard error in every mode (`--quiet` and `--json` too), in place of a redrawn
    /// progress line: what happens to the whole run (a signal's answer).
    func notice(_ text: String) {
        lock.withLock {
            clearProgress()
            Terminal.write(Data((text.visibleKeepingLines + "\n").utf8), to: STDERR_FILENO)
        }
    }

    /// An error on standard error (red on a colour TTY).
    func error(_ text: String) {
        let text = text.visibleKeepingLines
        let line = color ? "\u{1B}[31merror:\u{1B}[0m \(text)" : "error: \(text)"
        lock.withLock {
            clearProgress()
            Terminal.write(Data((line + "\n").utf8), to: STDERR_FILENO)
        }
    }

    /// One event of a verb that reports its work as it goes (`build`, `publish`, `verify`, store
    /// verbs that change the store, …), on its own line of standard output, tagged with the event
    /// schema (`Schemas/mappack-events.schema.json`).
    func event(_ event: some JSONEvent) {
        record(event)
    }

    /// One JSON object on its own line of standard output, tagged `"schema"` with the name and
    /// version of its file in `Schemas/`: a verb's one answer, or one row of a listing. A record
    /// that cannot be encoded is a `failed` event in its place, an error on standard error, and
    /// exit code 1 at the end (`lostLine`), never a line missing without a word.
    func record(_ record: some JSONRecord) {
        let (line, encoded) = JSONLine.encode(record)
        lock.withLock {
            if !encoded { lostLines += 1 }
            Terminal.write(line, to: STDOUT_FILENO)
        }
        if !encoded { error("a \(type(of: record).schema) line could not be written as JSON; a failed event stands in its place") }
    }

    /// Whether a JSON line could not be encoded: the run then ends with exit code 1.
    var lostLine: Bool { lock.withLock { lostLines > 0 } }
    private var lostLines = 0

    /// Whether progress is shown at all: not with `--json` (the events say it) or `--quiet`.
    var showsProgress: Bool { !json && !quiet }

    /// A progress line off a terminal (CI logs), on standard error; nothing on a terminal (where
    /// `progress` redraws one line), with `--json` or with `--quiet`.
    func log(_ text: String) {
        guard showsProgress, !isTTY else { return }
        lock.withLock { Terminal.write(Data((text.visibleKeepingLines + "\n").utf8), to: STDERR_FILENO) }
    }

    /// A progress line, redrawn in place on a TTY at most 10 times a second (always with `force`);
    /// nothing otherwise (`log` writes lines off a terminal).
    func progress(_ text: @autoclosure () -> String, force: Bool = false) {
        guard showsProgress, isTTY else { return }
        lock.withLock {
            let now = Date()
            guard force || now.timeIntervalSince(lastProgress) >= 0.1 else { return }
            lastProgress = now
            Terminal.write(Data(("\r\u{1B}[2K" + text().visible).utf8), to: STDERR_FILENO)
            progressShown = true
        }
    }

    private func clearProgress() {
        if progressShown {
            Terminal.write(Data("\r\u{1B}[2K".utf8), to: STDERR_FILENO)
            progressShown = false
        }
    }

    func finishProgress() { lock.withLock { clearProgress() } }

    /// Writes all of `data` to standard output or error. Output that nobody reads any more
    /// (`mappack regions … | head -1`: EPIPE, since SIGPIPE is ignored) ends the process quietly
    /// with 141, as a shell reports a death by SIGPIPE; `FileHandle.write` would trap there. Any
    /// other failure of standard output (a full disk) is failed work, exit 1; a standard error that
    /// cannot be written to is given up on.
    static func write(_ data: Data, to descriptor: Int32) {
        var failure: Errno?
        do { try FileDescriptor(rawValue: descriptor).writeAll(data.bytes) } catch { failure = error }
        if let failure, descriptor == STDOUT_FILENO {
            if failure.code == EPIPE { exit(ExitCode.closedOutput.rawValue) }
            write(Data("error: standard output: \(failure)\n".utf8), to: STDERR_FILENO)
            exit(ExitCode.failure.rawValue)
        }
    }
}
