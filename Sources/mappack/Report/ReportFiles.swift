import Foundation
import MapIO

/// `--html FILE` and `--markdown FILE` of `plan`, `inspect` and `diff`.
enum ReportFiles {
    /// Writes the reports the command line asks for. The HTML page replaces `FILE` atomically; the
    /// Markdown is appended (a CI job summary file collects several), or printed for `-`.
    static func write(_ report: @autoclosure () throws -> SizeReport, arguments: Arguments, terminal: Terminal) throws {
        let html = arguments.option(Verbs.html)
        let markdown = arguments.option(Verbs.markdown)
        guard html != nil || markdown != nil else { return }
        let report = try report()
        if let html {
            try FileSystem.writeAtomically(Data(try HTMLReport.render(report).utf8), to: html)
            terminal.note("report: \(html)")
        }
        if let markdown {
            let text = MarkdownReport.render(report)
            if markdown == "-" {
                terminal.line(text)
            } else {
                let handle: FileHandle
                if let existing = FileHandle(forWritingAtPath: markdown) {
                    handle = existing
                } else {
                    guard FileManager.default.createFile(atPath: markdown, contents: nil), let created = FileHandle(forWritingAtPath: markdown) else {
                        throw UsageError(message: "--markdown: cannot write \(markdown)")
                    }
                    handle = created
                }
                defer { try? handle.close() }
                try handle.seekToEnd()
                try handle.write(contentsOf: Data((text + "\n").utf8))
            }
        }
    }
}
