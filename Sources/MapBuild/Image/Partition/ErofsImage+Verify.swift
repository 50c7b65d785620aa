import Foundation
import MapFormat
import MapIO
import MapVerify

/// What `ErofsImage.verify` found.
package struct ErofsVerifyReport: Sendable {
    /// The sidecar beside the image.
    package let sidecar: VeritySidecar
    /// The check of the image folder inside, when it could be read out.
    package let inner: VerifyReport<ManifestHeader>?
    /// The partition image's own problems (hash tree, sidecar, signature), then the inner image's.
    package let problems: [VerifyProblem]
    /// Whether a trusted key's signature of the sidecar was checked and held.
    package let signatureChecked: Bool
    package var ok: Bool { problems.isEmpty }
}

extension ErofsImage {
    /// The extension `mappack verify` recognises a partition image by.
    package static let fileExtension = ErofsOutput.fileExtension

    /// Checks the partition image at `path` against its sidecar: the file's size, the sidecar's
    /// signature (with `trusted` keys; `.minisig` beside it), the whole hash tree against the
    /// root hash (`veritysetup verify`), then the image folder inside, read out of the filesystem
    /// without mounting it (`fsck.erofs --extract` into a temporary folder under `TMPDIR`, removed
    /// after) and checked as `mappack verify` checks a folder, its image id against the sidecar's.
    package static func verify(_ path: String, trusted: [TrustedKey], jobs: Int) throws -> ErofsVerifyReport {
        let sidecarPath = VeritySidecar.path(of: path)
        guard FileSystem.exists(sidecarPath) else {
            throw ImageOpenError.manifest(
                path: path,
                reason:
                    "no verity sidecar \(FileSystem.lastComponent(sidecarPath)) beside the partition image; keep the files a build writes together")
        }
        let sidecar = try VeritySidecar.read(sidecarPath)
        var problems: [VerifyProblem] = []
        func problem(_ kind: VerifyProblem.Kind, _ entry: String, _ detail: String) {
            problems.append(VerifyProblem(kind: kind, path: entry, regions: [], detail: detail))
        }
        let name = FileSystem.lastComponent(path)
        let size = try FileSystem.status(path)?.size ?? 0
        if size != sidecar.fileSize { problem(.sizeMismatch, name, "size \(size), the sidecar says \(sidecar.fileSize)") }

        var signatureChecked = false
        if !trusted.isEmpty {
            let signaturePath = sidecarPath + Minisign.signatureExtension
            let sidecarName = FileSystem.lastComponent(sidecarPath)
            if let signature = try? ReadableFile.contents(of: signaturePath, limit: 4096) {
                let bytes = try ReadableFile.contents(of: sidecarPath, limit: 64 << 10)
                let text = String(decoding: signature, as: UTF8.self)
                signatureChecked = try trusted.contains { key in
                    try Minisign.verify(bytes, signatureFile: text, publicKey: key.text, path: key.path)
                }
                if !signatureChecked {
                    problem(.signature, sidecarName, "\(FileSystem.lastComponent(signaturePath)) does not match the sidecar for any trusted key")
                }
            } else {
                problem(
                    .signature, sidecarName, "the sidecar is not signed (no \(FileSystem.lastComponent(signaturePath))), but a trusted key was given")
            }
        }

        do {
            try ExternalTool.veritysetup.run(["verify", path, path, sidecar.verity.rootHash] + sidecar.veritysetupOptions)
        } catch {
            guard case .failed(_, _, _, _, let output) = error else { throw error }
            problem(
                .digestMismatch, name,
                "the dm-verity hash tree does not match the root hash \(sidecar.verity.rootHash.prefix(16))…: "
                    + output.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "\n", with: "; "))
        }

        let scratch = FileManager.default.temporaryDirectory.path + "/mappack-erofs-\(getpid())-\(UUID().uuidString)"
        defer { try? FileSystem.removeTree(scratch) }
        try FileSystem.makeDirectories(scratch)
        let folder = scratch + "/image"
        var inner: VerifyReport<ManifestHeader>?
        do {
            try ExternalTool.fsckErofs.run(["--extract=\(folder)", "--no-preserve", path])
            let report = try ImageVerifier.verifyFolderStreaming(folder, hashContents: true, trusted: trusted, jobs: jobs)
            if report.manifest.imageID != sidecar.imageID {
                problem(.imageIDMismatch, ImageManifest.fileName, "image id \(report.manifest.imageID), the sidecar says \(sidecar.imageID)")
            }
            problems += report.problems
            inner = report
        } catch let error as ExternalToolError {
            guard case .failed(_, _, _, _, let output) = error else { throw error }
            problem(
                .missing, name,
                "the filesystem could not be read out (fsck.erofs): "
                    + output.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "\n", with: "; "))
        } catch let error as ImageOpenError {
            problem(.missing, ImageManifest.fileName, "the image inside: \(error)")
        }
        return ErofsVerifyReport(sidecar: sidecar, inner: inner, problems: problems, signatureChecked: signatureChecked)
    }
}
