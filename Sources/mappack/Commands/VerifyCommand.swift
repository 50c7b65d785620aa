import Foundation
import MapBuild
import MapFormat
import MapIO
import MapStore
import MapVerify

/// `mappack verify PATH`: an image folder, packed image or partition image against its manifest,
/// or an installed store.
enum VerifyCommand {
    static func run(_ raw: [String], terminal: Terminal) async throws -> ExitCode {
        let arguments = try Arguments(raw, verb: Verbs.verify)
        let path = try arguments.expect(["path"])[0]
        let jobs = try arguments.int(Verbs.jobs, range: 1...256) ?? ProcessInfo.processInfo.activeProcessorCount
        guard FileSystem.exists(path) else { throw ImageOpenError.noSuchFile(path: path) }
        let trusted = try arguments.option(Verbs.trust).map { [TrustedKey(path: $0, text: try KeyFiles.read($0))] } ?? []
        if MapStore.isStorage(URL(fileURLWithPath: path, isDirectory: true)) {
            return try await verifyStorage(path, full: !arguments.flag(Verbs.Verify.quick), trusted: trusted.map(\.text), terminal: terminal)
        }
        if !FileSystem.isDirectory(path), path.hasSuffix(ErofsImage.fileExtension) {
            return try verifyPartition(path, trusted: trusted, jobs: jobs, terminal: terminal)
        }
        let report: VerifyReport<ManifestHeader>
        do {
            report =
                FileSystem.isDirectory(path)
                ? try ImageVerifier.verifyFolderStreaming(path, hashContents: !arguments.flag(Verbs.Verify.quick), trusted: trusted, jobs: jobs)
                : try ImageVerifier.verifyPackedStreaming(path, trusted: trusted)
        } catch {
            switch error {
            case .archive: break
            case .notAnImage, .noSuchFile, .manifest: throw error
            }
            // An image whose archive breaks after its manifest was read (truncated, corrupted) failed the
            // check, like a folder with a damaged file (exit 1); what is no image at all, or whose manifest
            // breaks the format, is bad input (exit 2).
            return damaged(path, reason: "\(error)", terminal: terminal)
        }
        return say(
            report.problems, path: path,
            done: ImageVerifiedEvent(
                ok: report.ok, imageID: report.manifest.imageID, files: report.filesChecked, bytesHashed: report.bytesHashed,
                problems: report.problems.count),
            ok: "\(report.manifest.name) \(report.manifest.mapVersion), \(report.filesChecked) files, image id \(report.manifest.imageID.prefix(16))",
            terminal: terminal)
    }

    /// Prints an image's verification: each problem, then the `done` event (`--json`) or one line, `ok:`
    /// with `ok`'s words or `FAILED:` with the count; exit 0 or 1 (a failed check).
    static func say(_ problems: [VerifyProblem], path: String, done: ImageVerifiedEvent, ok: String, terminal: Terminal) -> ExitCode {
        if terminal.json {
            for problem in problems {
                terminal.event(
                    ProblemEvent(kind: problem.kind.rawValue, path: problem.path, regions: problem.regions.map(\.rawValue), detail: problem.detail))
            }
            terminal.event(done)
        } else {
            for problem in problems { terminal.error(problem.description) }
            terminal.line(done.ok ? "ok: \(path): \(ok)" : "FAILED: \(path): \(problems.count) problem\(problems.count == 1 ? "" : "s")")
        }
        return ExitCode(ok: done.ok)
    }

    /// Says that the packed image at `path` is damaged beyond a file-by-file check (its archive cannot be
    /// read to the end), as a failed verification.
    static func damaged(_ path: String, reason: String, terminal: Terminal) -> ExitCode {
        if terminal.json {
            terminal.event(ProblemEvent(kind: "damaged", path: path, detail: reason))
            terminal.event(ImageVerifiedEvent(ok: false, imageID: "", files: 0, bytesHashed: 0, problems: 1))
        } else {
            terminal.error(reason)
            terminal.line("FAILED: \(path): the image is damaged (rebuild it, or copy it again from where it was built)")
        }
        return .failure
    }

    /// A partition image (`.erofs`): its hash tree against the sidecar's root hash, the sidecar's
    /// signature, and the image inside (`ErofsImage.verify`).
    static func verifyPartition(_ path: String, trusted: [TrustedKey], jobs: Int, terminal: Terminal) throws -> ExitCode {
        let report = try ErofsImage.verify(path, trusted: trusted, jobs: jobs)
        let signed = report.signatureChecked ? ", sidecar signature ok" : ""
        return say(
            report.problems, path: path,
            done: ImageVerifiedEvent(
                ok: report.ok, imageID: report.sidecar.imageID, files: report.inner?.filesChecked ?? 0,
                bytesHashed: report.inner?.bytesHashed ?? 0, problems: report.problems.count),
            ok: "hash tree matches root hash \(report.sidecar.verity.rootHash.prefix(16))\(signed); "
                + "\(report.inner?.manifest.name ?? "") \(report.sidecar.mapVersion), \(report.inner?.filesChecked ?? 0) files, image id \(report.sidecar.imageID.prefix(16))",
            terminal: terminal)
    }

    /// An installed MapStore storage folder: its committed state against its kept manifest.
    static func verifyStorage(_ path: String, full: Bool, trusted: [String], terminal: Terminal) async throws -> ExitCode {
        let result = try await StoreCommand.waitFor {
            try await MapStore.verifyInstalled(storage: URL(fileURLWithPath: path, isDirectory: true), full: full, trustedPublicKeys: trusted)
        }
        if terminal.json {
            for problem in result.problems {
                terminal.event(
                    ProblemEvent(kind: problem.kind.rawValue, path: problem.path, regions: problem.regions.map(\.rawValue), detail: problem.detail))
            }
            terminal.event(StoreVerifiedEvent(ok: result.problems.isEmpty, imageID: result.imageID, problems: result.problems.count))
        } else {
            for problem in result.problems { terminal.error(problem.description) }
            terminal.line(
                result.problems.isEmpty
                    ? "ok: \(path): installed store at map version \(result.mapVersion), image id \(result.imageID.prefix(16))"
                    : "FAILED: \(path): \(result.problems.count) problem\(result.problems.count == 1 ? "" : "s")")
        }
        return ExitCode(ok: result.problems.isEmpty)
    }
}
