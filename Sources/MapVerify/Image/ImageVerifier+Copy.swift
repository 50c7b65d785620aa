import Foundation
import MapFormat
import MapIO

extension ImageVerifier {
    /// What `copyFolderStreaming` checked and copied.
    package struct StreamedCopy {
        /// The manifest's header (a streamed read keeps no file list).
        package var manifest: ManifestHeader
        /// What differs from the manifest, as `verifyFolderStreaming` reports it (the cache seed and
        /// the signature are the caller's).
        package var problems: [VerifyProblem]
        /// The first write of the copy that failed (a full disk shows there).
        package var copyFailure: FileError?
        /// Manifest entries checked.
        package var files: Int
    }

    /// Copies the store of the image folder `image` into the existing folder `destination` while
    /// checking it against the manifest at `manifestPath` (a copy of the image's own, so the bytes
    /// checked are the bytes kept), in one pass: the manifest's file list is read as a stream
    /// (`StreamedManifest`) and merged with a sorted walk of the store, each listed file is read once
    /// and written to the copy on `jobs` threads (hashed too with `hashContents`), and the copy's
    /// folders are made as the sorted entries come. Memory stays flat whatever the number of files.
    ///
    /// The checks are those of `verifyFolderStreaming`: the manifest's format, id and sizes on disk,
    /// every file present at its size (and digest), nothing extra, the image folder's entry rule.
    /// The copy holds only files as read, and nothing is fsynced: each file's writeback is started
    /// with `writeback`, and the caller syncs the copied tree before a rename shows it, and discards
    /// it on any problem. `stop` is asked before each file; once it says true the copy is partial.
    ///
    /// A manifest that cannot be mapped, or whose file list is not sorted as mappack writes it,
    /// throws what `readManifest` (or the streaming verifier) says of it.
    package static func copyFolderStreaming(
        _ image: String, manifest manifestPath: String, to destination: String, hashContents: Bool, jobs: Int,
        writeback: Writeback? = .kernel, stop: @escaping @Sendable () -> Bool = { false }
    ) throws(ImageOpenError) -> StreamedCopy {
        guard let mapping = MappedFile(path: manifestPath, limit: maxManifestBytes) else {
            // Empty, too large, unreadable, not a file: the ordinary reading says which.
            let data: Data
            do { data = try ReadableFile.contents(of: manifestPath, limit: maxManifestBytes) } catch {
                throw .manifest(path: manifestPath, reason: error.description)
            }
            _ = try readManifest(data, file: manifestPath)
            throw .manifest(path: manifestPath, reason: "the manifest cannot be read as a stream")
        }
        let check = StoreTreeCheck(
            store: image + "/" + ImageManifest.storeFolder, hashContents: hashContents, jobs: jobs, copyingTo: destination,
            writeback: writeback, stop: stop)
        let checked = try streamedCheck(folder: image, manifest: mapping, at: manifestPath, with: check, stop: stop)
        let header = checked.header
        let problems = checked.problems + checked.outcome.problems(owners: owners(of: header.regions))
        return StreamedCopy(manifest: header, problems: problems, copyFailure: checked.outcome.copyFailure, files: checked.outcome.files)
    }
}
