import Foundation
import MapFormat
import MapIO

/// `mappack verify PATH`: an image folder against its manifest.
enum VerifyCommand {
    static func run(_ raw: [String], terminal: Terminal) throws -> Int32 {
        let arguments = try Arguments(raw, flags: ["json", "quick", "full"], options: ["jobs", "trust"])
        let path = try arguments.expect(["path"])[0]
        let jobs = try arguments.int("jobs", range: 1...256) ?? ProcessInfo.processInfo.activeProcessorCount
        guard FileSystem.exists(path) else { throw ImageOpenError.notAnImage(path: path) }
        let trusted = try arguments.option("trust").map { [TrustedKey(path: $0, text: try KeyFiles.read($0))] } ?? []
        let report = FileSystem.isDirectory(path)
            ? try ImageVerifier.verifyFolder(path, hashContents: !arguments.flag("quick"), trusted: trusted, jobs: jobs)
            : try ImageVerifier.verifyPacked(path, trusted: trusted)
        if terminal.json {
            for problem in report.problems {
                terminal.event(["event": "problem", "kind": problem.kind.rawValue, "path": problem.path, "regions": problem.regions.map(\.rawValue), "detail": problem.detail])
            }
            terminal.event(["event": "done", "ok": report.ok, "imageID": report.manifest.imageID, "files": report.filesChecked,
                            "bytesHashed": report.bytesHashed, "problems": report.problems.count])
        } else {
            for problem in report.problems { terminal.error(problem.description) }
            terminal.line(report.ok
                ? "ok: \(path): \(report.manifest.name) \(report.manifest.mapVersion), \(report.filesChecked) files, image id \(report.manifest.imageID.prefix(16))"
                : "FAILED: \(path): \(report.problems.count) problem\(report.problems.count == 1 ? "" : "s")")
        }
        return report.ok ? 0 : 1
    }
}
