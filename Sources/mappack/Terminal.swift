import Foundation
import MapFormat

/// Writes human output, progress lines and JSON events.
final class Terminal: @unchecked Sendable {
    let json: Bool
    let isTTY: Bool
    let color: Bool
    private let lock = NSLock()
    private var lastProgress = Date.distantPast
    private var progressShown = false

    init(json: Bool) {
        self.json = json
        isTTY = isatty(STDERR_FILENO) == 1
        color = isTTY && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
    }

    /// A line on standard output.
    func line(_ text: String) {
        lock.withLock {
            clearProgress()
            FileHandle.standardOutput.write((text + "\n").data(using: .utf8)!)
        }
    }

    /// A message on standard error.
    func note(_ text: String) {
        lock.withLock {
            clearProgress()
            FileHandle.standardError.write((text + "\n").data(using: .utf8)!)
        }
    }

    /// An error on standard error (red on a colour TTY).
    func error(_ text: String) {
        note(color ? "\u{1B}[31merror:\u{1B}[0m \(text)" : "error: \(text)")
    }

    /// One JSON object on its own line (standard output).
    func event(_ object: [String: any Sendable]) {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        lock.withLock { FileHandle.standardOutput.write(data + Data("\n".utf8)) }
    }

    /// A progress line, redrawn in place on a TTY at most 10 times a second; nothing otherwise.
    func progress(_ text: @autoclosure () -> String, force: Bool = false) {
        guard isTTY, !json else { return }
        lock.withLock {
            let now = Date()
            guard force || now.timeIntervalSince(lastProgress) >= 0.1 else { return }
            lastProgress = now
            FileHandle.standardError.write(("\r\u{1B}[2K" + text()).data(using: .utf8)!)
            progressShown = true
        }
    }

    private func clearProgress() {
        if progressShown { FileHandle.standardError.write("\r\u{1B}[2K".data(using: .utf8)!); progressShown = false }
    }

    func finishProgress() { lock.withLock { clearProgress() } }
}
