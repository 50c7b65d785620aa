import Foundation
import MapFormat
import MapIO
import Synchronization

/// One way an image or store differs from its manifest.
package struct VerifyProblem: Sendable, Equatable, CustomStringConvertible {
    package enum Kind: String, Sendable {
        case missing, extra, notRegularFile, sizeMismatch, digestMismatch, sizeOnDiskMismatch, imageIDMismatch, cacheSeedMismatch, signature
    }
    package let kind: Kind
    /// Store-relative path (or manifest field) concerned.
    package let path: String
    /// Regions the file belongs to.
    package let regions: [RegionID]
    /// Detail for people.
    package let detail: String

    /// A problem of `kind` at `path`.
    package init(kind: Kind, path: String, regions: [RegionID], detail: String) {
        self.kind = kind
        self.path = path
        self.regions = regions
        self.detail = detail
    }

    package var description: String {
        let owners = regions.isEmpty ? "" : " (region \(regions.map(\.rawValue).joined(separator: ", ")))"
        return "\(path)\(owners): \(detail)"
    }
}

/// What was refused before any file was checked: not an image, unreadable or malformed manifest.
package enum ImageOpenError: Error, Sendable, CustomStringConvertible {
    case notAnImage(path: String)
    /// Nothing at `path` (or a dangling link).
    case noSuchFile(path: String)
    case manifest(path: String, reason: String)
    case archive(path: String, ArchiveError)

    package var description: String {
        switch self {
        case .notAnImage(let path):
            "\(path): not a mappack image (no \(ImageManifest.fileName)); give an image folder, an image .tar.zst or an installed store"
        case .noSuchFile(let path):
            "\(path): no such file or folder; give an image folder, an image .tar.zst or an installed store (`mappack build` writes images)"
        case .manifest(let path, let reason): "\(path): \(reason)"
        case .archive(let path, let error): "\(path): \(error)"
        }
    }
}

/// The outcome of a verification;
/// `manifest` is what the verification kept of the manifest: an `ImageManifest` (with its file
/// list), or a `ManifestHeader` after a streamed verification, which keeps no file list.
package struct VerifyReport<Manifest: Sendable>: Sendable {
    package let manifest: Manifest
    package let problems: [VerifyProblem]
    package let filesChecked: Int
    package let bytesHashed: Int64
    /// True when a `manifest.sig` is present.
    package var signed: Bool = false
    package var ok: Bool { problems.isEmpty }

    package init(manifest: Manifest, problems: [VerifyProblem], filesChecked: Int, bytesHashed: Int64) {
        (self.manifest, self.problems, self.filesChecked, self.bytesHashed) = (manifest, problems, filesChecked, bytesHashed)
    }
}

extension VerifyReport where Manifest == ImageManifest {
    /// The same report, keeping only the manifest's header.
    package var headerOnly: VerifyReport<ManifestHeader> {
        var report = VerifyReport<ManifestHeader>(manifest: manifest.header, problems: problems, filesChecked: filesChecked, bytesHashed: bytesHashed)
        report.signed = signed
        return report
    }
}

/// Checks an image (folder or `.tar.zst`) or a store tree against its manifest: every file present,
/// nothing extra, sizes and SHA-256 match, `sizeOnDiskInBytes` re-derived, image id recomputed.
package enum ImageVerifier {
    /// Largest manifest accepted.
    package static let maxManifestBytes = 512 << 20

    /// Decodes and checks a manifest's format and id.
    package static func readManifest(_ data: Data, file: String) throws(ImageOpenError) -> (ImageManifest, [VerifyProblem]) {
        let manifest: ImageManifest
        do { manifest = try ManifestReader.read(data, file: file) } catch let refused as ManifestReader.RefusedEntry {
            // The format and the block size are checked before the file list, as for a manifest that lists no such file.
            try checkHeader(refused.manifest.header, file: file)
            throw .manifest(path: file, reason: refused.refusal.description)
        } catch {
            // A newer major may have any shape, and deserves "unknown format" rather than a field error.
            struct Head: Decodable { let format: String? }
            if let head = try? JSONDecoder().decode(Head.self, from: data), head.format != ImageManifest.formatTag.description {
                do { try FormatTagError.check(head.format, expected: ImageManifest.formatTag) } catch {
                    throw .manifest(path: file, reason: error.description)
                }
            }
            var detail = "\(error)"
            if let fileError = error as? JSONFileError {
                let place = fileError.line.map { "line \($0), column \(fileError.column ?? 0): " } ?? ""
                detail = place + (fileError.codingPath.isEmpty ? "" : "at \(fileError.codingPath): ") + fileError.reason
            }
            throw .manifest(path: file, reason: "not a valid manifest: \(detail)")
        }
        let header = manifest.header
        try checkHeader(header, file: file)
        if let entry = manifest.files.first(where: { $0.size < 0 }) {
            throw .manifest(path: file, reason: ManifestEntryRefusal.negativeSize(path: entry.path).description)
        }
        if hasDuplicateRegions(header) || Set(manifest.files.map(\.path)).count != manifest.files.count {
            throw .manifest(path: file, reason: duplicateReason)
        }
        // The file's own bytes with the id blanked are what the id hashes (a canonical file);
        // any edit, even a re-formatting, changes them. Re-encode only when the field is not found.
        // Hashed in place (`ManifestIDDigest`), not from a blanked copy: two copies of a manifest of
        // 10⁵ files were a third of a device install's peak memory (issue 34).
        var idDigest = ManifestIDDigest()
        idDigest.advance(data.bytes, to: data.count, imageID: manifest.imageID, final: true)
        let expected = idDigest.finish() ?? (try? manifest.bytesForID()).map(SHA256.hex) ?? ""
        return (manifest, problems(of: header, expectedID: expected, derivedSizes: manifest.derivedSizesOnDisk()))
    }

    /// The image id the manifest file at `path` names, read from its end (`ManifestReader.imageIDFromEnd`)
    /// without decoding it; nil when it cannot be read, is larger than `maxManifestBytes` or names none.
    /// A store's open reads its kept manifest's id this way when the file changed, and an unsigned
    /// in-place base's on every open.
    package static func imageIDFromEnd(ofManifestAt path: String) -> String? {
        guard let file = try? ReadableFile(path: path), let size = try? file.size(), size <= Int64(maxManifestBytes) else { return nil }
        return ManifestReader.imageIDFromEnd(size: size) { offset, count in try? file.read(fromOffset: offset, count: count) }
    }

    /// Checks what does not depend on the file list: the format and the block size.
    static func checkHeader(_ manifest: ManifestHeader, file: String) throws(ImageOpenError) {
        do { try FormatTagError.check(manifest.format, expected: ImageManifest.formatTag) } catch {
            throw .manifest(path: file, reason: error.description)
        }
        guard manifest.blockSize >= 512, manifest.blockSize <= 1 << 20, manifest.blockSize & (manifest.blockSize - 1) == 0 else {
            throw .manifest(path: file, reason: "blockSize \(manifest.blockSize) is not a power of two from 512 to 1 MiB")
        }
    }

    static func hasDuplicateRegions(_ manifest: ManifestHeader) -> Bool { Set(manifest.regions.map(\.id)).count != manifest.regions.count }

    static let duplicateReason = "a region id or a file path appears twice"

    /// The manifest's own problems: an id that is not `expectedID` (the hex SHA-256 of its bytes
    /// with the id blanked), and regions whose `sizeOnDiskInBytes` is not `derivedSizes`'.
    static func problems(of manifest: ManifestHeader, expectedID expected: String, derivedSizes derived: [RegionID: Int64]) -> [VerifyProblem] {
        var problems: [VerifyProblem] = []
        if let problem = idProblem(of: manifest, expectedID: expected) { problems.append(problem) }
        for region in manifest.regions where derived[region.id] != region.sizeOnDiskInBytes {
            problems.append(
                VerifyProblem(
                    kind: .sizeOnDiskMismatch, path: ImageManifest.fileName, regions: [region.id],
                    detail:
                        "sizeOnDiskInBytes \(region.sizeOnDiskInBytes) but its files take \(derived[region.id] ?? 0) at block size \(manifest.blockSize)"
                ))
        }
        return problems
    }

    /// The problem of an id that is not `expected` (the hex SHA-256 of the manifest's bytes with the id blanked).
    static func idProblem(of manifest: ManifestHeader, expectedID expected: String) -> VerifyProblem? {
        guard expected != manifest.imageID else { return nil }
        return VerifyProblem(
            kind: .imageIDMismatch, path: ImageManifest.fileName, regions: [],
            detail: "image id \(manifest.imageID) does not match the manifest's content (\(expected)); the manifest was edited")
    }

    /// The signature problem, if any: with trusted keys an image must carry a signature one of them made.
    package static func checkSignature(manifestBytes: Data, signature: Data?, trusted: [TrustedKey]) throws(ImageOpenError) -> VerifyProblem? {
        guard !trusted.isEmpty else { return nil }
        guard let signature, let raw = Data(base64Encoded: String(decoding: signature, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            return VerifyProblem(kind: .signature, path: ImageManifest.signatureFileName, regions: [], detail: SignatureError.unsigned.description)
        }
        for key in trusted {
            do { if try Ed25519.verify(manifestBytes, signature: raw, publicKey: key.text, path: key.path) { return nil } } catch {
                throw .manifest(path: key.path, reason: error.description)
            }
        }
        return VerifyProblem(kind: .signature, path: ImageManifest.signatureFileName, regions: [], detail: SignatureError.badSignature.description)
    }

    /// Verifies the image folder at `path` (with `manifest.json`, `store/`, optional cache seed).
    package static func verifyFolder(
        _ path: String, hashContents: Bool = true, trusted: [TrustedKey] = [],
        jobs: Int = ProcessInfo.processInfo.activeProcessorCount
    ) throws(ImageOpenError) -> VerifyReport<ImageManifest> {
        let manifestPath = path + "/" + ImageManifest.fileName
        guard FileSystem.exists(manifestPath) else { throw .notAnImage(path: path) }
        let data: Data
        do { data = try ReadableFile.contents(of: manifestPath, limit: maxManifestBytes) } catch {
            throw .manifest(path: manifestPath, reason: error.description)
        }
        var (manifest, problems) = try readManifest(data, file: manifestPath)
        problems += layoutProblems(ofFolder: path)
        let signaturePath = path + "/" + ImageManifest.signatureFileName
        let signature = try? ReadableFile.contents(of: signaturePath, limit: 4096)
        if let problem = try checkSignature(manifestBytes: data, signature: signature, trusted: trusted) { problems.append(problem) }
        let result = verifyTree(path + "/" + ImageManifest.storeFolder, manifest: manifest, hashContents: hashContents, jobs: jobs)
        problems += result.problems
        if let problem = cacheSeedProblem(manifest.cacheSeed, image: path) { problems.append(problem) }
        var report = VerifyReport(manifest: manifest, problems: problems, filesChecked: result.files, bytesHashed: result.bytes)
        report.signed = signature != nil
        return report
    }

    /// The entries of the image folder at `path` that the entry rule (`PackedImageEntry`) refuses.
    static func layoutProblems(ofFolder path: String) -> [VerifyProblem] {
        PackedImageEntry.refusals(inFolder: path).map { VerifyProblem(kind: .extra, path: $0.entry, regions: [], detail: $0.description) }
    }

    /// The cache seed's problem, if any, in the image folder at `image`.
    static func cacheSeedProblem(_ seed: ImageCacheSeed?, image: String) -> VerifyProblem? {
        guard let seed else { return nil }
        guard let (digest, size) = try? SHA256.digestOfFile(image + "/" + ImageManifest.cacheSeedFileName) else {
            return VerifyProblem(kind: .missing, path: ImageManifest.cacheSeedFileName, regions: seed.regions, detail: "cache seed is missing")
        }
        guard digest != seed.sha256 || size != seed.size else { return nil }
        return VerifyProblem(
            kind: .cacheSeedMismatch, path: ImageManifest.cacheSeedFileName, regions: seed.regions,
            detail: "cache seed differs from the manifest (sha256 \(digest.hex), \(size) bytes)")
    }

    /// Compares the tree at `store` with the manifest's file list (in any order).
    ///
    /// `stop` is asked before each file is handed to the hashing threads and by those threads
    /// before each file they open, so a long check ends between files once it says true; the
    /// result is then partial, and the caller (which knows why it stopped) discards it.
    package static func verifyTree(
        _ store: String, manifest: ImageManifest, hashContents: Bool, jobs: Int, stop: @escaping @Sendable () -> Bool = { false }
    ) -> (problems: [VerifyProblem], files: Int, bytes: Int64) {
        var files = manifest.files
        let inOrder = zip(files, files.dropFirst()).allSatisfy { $0.path.string.utf8.lexicographicallyPrecedes($1.path.string.utf8) }
        if !inOrder { files.sort { $0.path.string.utf8.lexicographicallyPrecedes($1.path.string.utf8) } }
        let check = StoreTreeCheck(store: store, hashContents: hashContents, jobs: jobs, stop: stop)
        let outcome = check.run { (merge: inout StoreTreeCheck.Merge) in
            for file in files {
                if stop() { break }
                ManifestStream.FileEntry.with(file) { merge.check($0) }
            }
        }
        return (outcome.problems(owners: owners(of: manifest.regions)), outcome.files, outcome.bytes)
    }

    /// Copies the manifest's files from the tree at `store` into the existing folder `destination`
    /// while checking the tree in full (the check of `verifyTree` with SHA-256), on `jobs` threads:
    /// every byte is read once, and the copy holds exactly the bytes that were hashed. Nothing is
    /// fsynced: each file's writeback is started as soon as it is copied (`writeback`), and the
    /// caller syncs the whole copied tree (`FileSystem.syncTree`) before a rename shows it.
    /// `copyFailure` is the first write that failed (a full disk shows there).
    package static func copyVerified(
        _ store: String, to destination: String, manifest: ImageManifest,
        jobs: Int, writeback: Writeback = .kernel
    ) -> (problems: [VerifyProblem], copyFailure: FileError?) {
        // The check makes each file's folders in the copy as the sorted entries come.
        var files = manifest.files
        let inOrder = zip(files, files.dropFirst()).allSatisfy { $0.path.string.utf8.lexicographicallyPrecedes($1.path.string.utf8) }
        if !inOrder { files.sort { $0.path.string.utf8.lexicographicallyPrecedes($1.path.string.utf8) } }
        let outcome = StoreTreeCheck(store: store, hashContents: true, jobs: jobs, copyingTo: destination, writeback: writeback).run {
            (merge: inout StoreTreeCheck.Merge) in
            for file in files { ManifestStream.FileEntry.with(file) { merge.check($0) } }
        }
        return (outcome.problems(owners: owners(of: manifest.regions)), outcome.copyFailure)
    }

    /// The regions whose own bundles include each bundle.
    static func owners(of regions: [ImageRegion]) -> [BundleDigest: [RegionID]] {
        var owners: [BundleDigest: [RegionID]] = [:]
        for region in regions { for bundle in region.bundles { owners[bundle, default: []].append(region.id) } }
        return owners
    }
}
