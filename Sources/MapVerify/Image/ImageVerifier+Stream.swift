import Foundation
import MapFormat
import MapIO
import Synchronization

extension ImageVerifier {
    /// Verifies the image folder at `path` as `verifyFolder` does, with the same problems and
    /// errors, but reads the manifest's file list as a stream merged with a sorted walk of the
    /// store: memory stays flat whatever the number of files, and hashing starts with the first
    /// entry. The report keeps the manifest's header only (`report.filesChecked` counts the files).
    ///
    /// The file list must be sorted by path (bytewise), as mappack writes it; an unsorted one is
    /// refused as a bad manifest.
    package static func verifyFolderStreaming(
        _ path: String, hashContents: Bool = true, trusted: [TrustedKey] = [],
        jobs: Int = ProcessInfo.processInfo.activeProcessorCount
    ) throws(ImageOpenError) -> VerifyReport<ManifestHeader> {
        let manifestPath = path + "/" + ImageManifest.fileName
        guard FileSystem.exists(manifestPath) else { throw .notAnImage(path: path) }
        guard let mapping = MappedFile(path: manifestPath, limit: maxManifestBytes) else {
            // Empty, too large, unreadable, not a file: the ordinary reading says which.
            return try verifyFolder(path, hashContents: hashContents, trusted: trusted, jobs: jobs).headerOnly
        }
        let check = StoreTreeCheck(store: path + "/" + ImageManifest.storeFolder, hashContents: hashContents, jobs: jobs)
        let checked = try streamedCheck(folder: path, manifest: mapping, at: manifestPath, with: check)
        let outcome = checked.outcome
        let header = checked.header
        var problems = checked.problems
        let signaturePath = path + "/" + ImageManifest.signatureFileName
        let signature = try? ReadableFile.contents(of: signaturePath, limit: 4096)
        if !trusted.isEmpty {
            defer { mapping.releaseAll() }
            if let problem = try checkSignature(manifestBytes: mapping.readOnlyData, signature: signature, trusted: trusted) {
                problems.append(problem)
            }
        }
        problems += outcome.problems(owners: owners(of: header.regions))
        if let problem = cacheSeedProblem(header.cacheSeed, image: path) { problems.append(problem) }
        var report = VerifyReport(manifest: header, problems: problems, filesChecked: outcome.files, bytesHashed: outcome.bytes)
        report.signed = signature != nil
        return report
    }

    /// The streamed check `verifyFolderStreaming` and `copyFolderStreaming` share: the manifest at
    /// `manifestPath` (mapped as `mapping`) read as a stream and merged with `check`'s walk of the
    /// image folder's store until `stop` says true. Returns the manifest's header, the
    /// problems of the manifest and of the folder's layout (the store's are in `outcome`), and the
    /// check's outcome.
    static func streamedCheck(
        folder: String, manifest mapping: MappedFile, at manifestPath: String, with check: StoreTreeCheck, stop: () -> Bool = { false }
    ) throws(ImageOpenError) -> (header: ManifestHeader, problems: [VerifyProblem], outcome: StoreTreeCheck.Outcome) {
        var manifest: StreamedManifest
        do { manifest = try StreamedManifest(mapping, file: manifestPath) } catch {
            throw StreamedManifest.explain(error, mapping: mapping, file: manifestPath)
        }
        let outcome: StoreTreeCheck.Outcome
        do {
            outcome = try check.run { (merge: inout StoreTreeCheck.Merge) throws(StreamedManifest.Stop) in
                while !stop(), try manifest.next({ merge.check($0) }) {}
            }
        } catch {
            throw StreamedManifest.explain(error, mapping: mapping, file: manifestPath)
        }
        let (header, problems) = try manifest.finish()
        return (header, problems + layoutProblems(ofFolder: folder), outcome)
    }
}

extension ImageVerifier {
    /// The manifest at `manifestPath` read once as a stream and checked as `readManifest` checks it
    /// (format, entries, id over the same bytes, sizes on disk) without building its file list: for
    /// an image used in place whose first start hashes no file, where decoding a manifest of 10⁵
    /// files in full was most of the work. Returns the manifest's header (it keeps no file list),
    /// and its problems. A manifest that cannot be mapped (empty, too large, not a file) is read the
    /// ordinary way, for the error it always got; as in `verifyFolderStreaming`, a file list not
    /// sorted by path is refused.
    ///
    /// Without `checkingPaths` the entries' paths are read but not checked (as store paths, for order,
    /// for duplicates); their sizes are, with everything else. An in-place store's first start reads its
    /// base so: it reads none of the base's files, and whatever reads the file list later (`verify`, an
    /// update, a delete, a repair, the regions' holdings) reads it whole and checks every entry.
    package static func readManifestStreaming(
        at manifestPath: String, checkingPaths: Bool = true
    ) throws(ImageOpenError) -> (manifest: ManifestHeader, problems: [VerifyProblem]) {
        guard let mapping = MappedFile(path: manifestPath, limit: maxManifestBytes) else {
            let data: Data
            do { data = try ReadableFile.contents(of: manifestPath, limit: maxManifestBytes) } catch {
                throw .manifest(path: manifestPath, reason: error.description)
            }
            let (manifest, problems) = try readManifest(data, file: manifestPath)
            return (manifest.header, problems)
        }
        // The id's SHA-256 on a second thread while this one reads the entries: each is about half the work.
        let stop = StopFlag()
        defer { stop.raise() }
        let hashing = BlockingPool.start { ManifestIDDigest.concurrent(at: manifestPath, limit: maxManifestBytes, stop: stop.isRaised) }
        var stream: StreamedManifest
        do { stream = try StreamedManifest(mapping, file: manifestPath, hashingID: false, checkingPaths: checkingPaths) } catch {
            throw StreamedManifest.explain(error, mapping: mapping, file: manifestPath)
        }
        do { while try stream.next({ _ in }) {} } catch { throw StreamedManifest.explain(error, mapping: mapping, file: manifestPath) }
        return try stream.finish(concurrentID: (try? hashing.value()) ?? nil)
    }
}

/// Tells a job on another thread to stop early (its result no longer wanted).
final class StopFlag: Sendable {
    private let raised = Atomic<Bool>(false)

    func raise() { raised.store(true, ordering: .relaxed) }

    func isRaised() -> Bool { raised.load(ordering: .relaxed) }
}
