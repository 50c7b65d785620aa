import Foundation
import MapFormat
import MapIO
import MapVerify

/// First-start install: validate, stage, fsync, rename into place, commit, import the cache seed.
extension StoreCore {
    /// Installs `image` into the (empty) storage. On a refused image, and when the operation is
    /// cancelled before the commit (checked between files and phases), the storage is left empty.
    func install(_ image: PreinstalledImage, linkFiles: Bool) throws {
        do {
            try checkCancelled()
            try FileSystem.makeDirectoriesDurably(layout.root)
            let state = try StateDatabase(path: layout.state, marking: .install(imageID: image.path))
            self.state = state
            try FileSystem.syncDirectory(layout.root)
            CrashPoint.reach("install.afterMark")
            let staged: StagedImage
            do {
                staged = try stage(image, link: linkFiles)
                // The last point where a cancellation stops the install: after it, the commit.
                try checkCancelled()
            } catch {
                // Never committed: what cannot be wiped now reads as `interruptedInstall` at the next open,
                // which installs afresh. The caller hears the cause.
                do { try wipe() } catch {}
                throw error
            }
            try commitStaged(staged, state: state)
        } catch {
            // Nothing committed: nothing may look installed (a full disk can stop even the state database).
            // (As above: leftovers of an install that never committed read as `interruptedInstall`.)
            if (try? state?.imageID) ?? nil == nil {
                do { try wipe() } catch {}
            }
            throw outOfSpace(error) ?? error
        }
    }

    /// Replaces whatever the storage holds with `staged`, an image validated and staged while the old
    /// data was still in place, so a refused image never costs data that verifies.
    func replaceWithStaged(_ staged: StagedImage) throws {
        try wipe(keepingStaging: true)
        let state = try StateDatabase(path: layout.state, marking: .install(imageID: staged.manifest.imageID))
        self.state = state
        try FileSystem.syncDirectory(layout.root)
        try commitStaged(staged, state: state)
    }

    /// Validates `image` into this process's staging folder: everything in the storage stays as it was,
    /// and on a refusal the staging folder is removed. A full disk is `outOfSpace`.
    func stage(_ image: PreinstalledImage, link: Bool) throws -> StagedImage {
        do {
            try FileSystem.removeTree(layout.staging)
            try FileSystem.makeDirectories(layout.staging)
            if !FileSystem.exists(image.path) { throw MapStoreError.notAnImage(path: image.path, reason: "no such file or folder") }
            if !image.isArchive, !FileSystem.exists(image.path + "/" + ImageManifest.fileName) {
                throw MapStoreError.notAnImage(path: image.path, reason: "no \(ImageManifest.fileName)")
            }
            return image.isArchive ? try stageArchive(image) : try stageFolder(image, link: link)
        } catch {
            // Staged, not committed: a staging folder left behind is swept at the next open.
            do { try FileSystem.removeTree(layout.staging) } catch {}
            throw outOfSpace(error) ?? error
        }
    }

    /// `error` as `outOfSpace` in this storage when it is a write that found the filesystem full.
    private func outOfSpace(_ error: any Error) -> MapStoreError? { MapStoreError.outOfSpace(error, storage: layout.root) }

    /// Renames a staged image into place and commits it, then imports its cache seed.
    private func commitStaged(_ staged: StagedImage, state: StateDatabase) throws {
        CrashPoint.reach("install.afterStaging")
        try FileSystem.syncTree(layout.staging)
        CrashPoint.reach("install.beforeRename")
        let staging = layout.stagingArea
        try staging.commit(ImageManifest.storeFolder, as: ImageManifest.storeFolder, sync: false)
        CrashPoint.reach("install.afterRename")
        if staged.signed {
            try staging.commit(ImageManifest.signatureFileName, as: ImageManifest.signatureFileName, sync: false)
        } else {
            try FileSystem.removeFile(layout.signature)
        }
        try staging.commit(ImageManifest.fileName, as: ImageManifest.fileName, sync: false)
        try FileSystem.syncDirectory(layout.root)
        CrashPoint.reach("install.beforeCommit")
        try state.commitInstall(staged.manifest, seedPending: staged.seed != nil, signed: staged.signed)
        CrashPoint.reach("install.afterCommit")
        if let seed = staged.seed { try importPendingSeed(seed, storeVersion: staged.manifest.mapVersion) }
        try FileSystem.removeTree(layout.staging)
    }

    /// Imports the seed and clears the pending import; a seed older than the store is skipped, not fatal.
    func importPendingSeed(_ seed: String, storeVersion: MapVersion) throws {
        do {
            _ = try caches.with { try $0.importSeed(seed, storeVersion: storeVersion) }
        } catch MapStoreError.seedOlderThanStore {
            // The store is usable without its seed; an older seed would only serve stale data.
        }
        CrashPoint.reach("cache.afterImport")
        try state?.clearPending()
    }

    /// Reads and checks a manifest: format, image id, derived sizes, and the signature beside it
    /// when keys are trusted. Returns the exact bytes checked and the signature, if any.
    func checkedManifest(at path: String, image: PreinstalledImage) throws -> (manifest: ImageManifest, bytes: Data, signature: Data?) {
        let data: Data
        do { data = try ReadableFile.contents(of: path, limit: ImageVerifier.maxManifestBytes) } catch {
            throw MapStoreError.notAnImage(path: image.path, reason: "\(ImageManifest.fileName): \(error)")
        }
        // A manifest that does not read as one is no image, as `mappack verify` says (exit 2).
        let (manifest, problems): (ImageManifest, [VerifyProblem])
        do { (manifest, problems) = try ImageVerifier.readManifest(data, file: path) } catch {
            throw MapStoreError.notAnImage(path: image.path, reason: error.description)
        }
        if let problem = problems.first { throw MapStoreError.invalidImage(path: image.path, reason: problem.description) }
        let signature = try? ReadableFile.contents(of: FileSystem.parent(path) + "/" + ImageManifest.signatureFileName, limit: 4096)
        do {
            if let problem = try ImageVerifier.checkSignature(manifestBytes: data, signature: signature, trusted: trustedKeys) {
                throw MapStoreError.invalidImage(path: image.path, reason: problem.description)
            }
        } catch let error as ImageOpenError {
            throw MapStoreError.invalidImage(path: image.path, reason: error.description)
        }
        return (manifest, data, signature)
    }

    /// Validates a folder image and copies its store into staging. The quick check (no trusted
    /// keys, no `fullValidation`) copies while it checks (`stageFolderStreaming`). With trusted keys
    /// or `fullValidation` every file is hashed as it is copied, on all cores (`copyVerified`): the
    /// copy holds exactly the bytes checked, so a file changed in the image meanwhile cannot slip in.
    /// For hard links, sizes and the file list are checked first (and the links hashed after, when
    /// hashing). The manifest staged is the exact bytes checked, the seed a copy hashed and checked
    /// row by row.
    private func stageFolder(_ image: PreinstalledImage, link: Bool) throws -> StagedImage {
        // The entry rule `mappack verify` and the packed install apply: nothing beside the manifest rides along unchecked.
        if let refusal = PackedImageEntry.refusals(inFolder: image.path).first {
            throw MapStoreError.invalidImage(path: image.path, reason: refusal.description)
        }
        let hashes = fullValidation || !trustedKeys.isEmpty
        if !hashes && !link { return try stageFolderStreaming(image) }
        let checked = try checkedManifest(at: image.path + "/" + ImageManifest.fileName, image: image)
        let manifest = checked.manifest
        let jobs = ProcessInfo.processInfo.activeProcessorCount
        let source = image.path + "/" + ImageManifest.storeFolder
        let staged = layout.staging + "/" + ImageManifest.storeFolder
        try FileSystem.makeDirectories(staged)
        if hashes && !link {
            let (problems, copyFailure) = ImageVerifier.copyVerified(source, to: staged, manifest: manifest, jobs: jobs)
            // A failed write (a full disk) makes its files look missing: the cause comes first.
            if let copyFailure { throw copyFailure }
            if let problem = problems.first { throw MapStoreError.invalidImage(path: image.path, reason: problem.description) }
            CrashPoint.reach("install.midStaging", storage: layout.root)
            try checkCancelled()
        } else {
            let problems = ImageVerifier.verifyTree(source, manifest: manifest, hashContents: false, jobs: jobs).problems
            if let problem = problems.first { throw MapStoreError.invalidImage(path: image.path, reason: problem.description) }
            try FileSteps.copyFiles(manifest.files.map { ($0.path.string, $0.size) }, from: source, to: staged, link: link) { _, index in
                if index == 0 { CrashPoint.reach("install.midStaging", storage: layout.root) }
                try checkCancelled()
            }
            if hashes {
                let linked = ImageVerifier.verifyTree(staged, manifest: manifest, hashContents: true, jobs: jobs).problems
                if let problem = linked.first { throw MapStoreError.invalidImage(path: image.path, reason: problem.description) }
            }
        }
        let seed = try stageSeed(of: image, expected: manifest.cacheSeed)
        try FileSteps.writeDurably(checked.bytes, to: layout.staging + "/" + ImageManifest.fileName)
        if let signature = checked.signature { try FileSteps.writeDurably(signature, to: layout.staging + "/" + ImageManifest.signatureFileName) }
        return StagedImage(manifest: manifest.header, seed: seed, signed: checked.signature != nil)
    }

    /// The quick check of a folder image, copying as it checks (`ImageVerifier.copyFolderStreaming`):
    /// the image's manifest is copied into staging first and the copy is what is checked and kept;
    /// its file list is read as a stream, merged with a sorted walk of the image's store, and each
    /// listed file is copied on all cores as it is found at its size, its folders made as the
    /// sorted entries come. Nothing of the file list is held (issue 34: a 58,000-file manifest read
    /// whole was half of an install's peak memory), and each file costs one open and read of the
    /// source and one open and write of the copy. Any problem refuses the image, and `stage`
    /// removes the partial copy.
    ///
    /// No file's writeback is started early here (no `Writeback`): with nothing to overlap it with
    /// (no decompression, no hashing), a `sync_file_range` per file only splits the writes: on the
    /// 0.1 GiB bench world (57,849 files) it sent 64,000 write requests to the disk instead of
    /// 8,000, cost a second of system time, and made the install slower than `cp -r` and one
    /// `syncfs`. The one `syncfs` before the rename (`commitStaged`) makes the copy durable either way.
    private func stageFolderStreaming(_ image: PreinstalledImage) throws -> StagedImage {
        let stagedManifest = layout.staging + "/" + ImageManifest.fileName
        do { try FileSystem.copyFile(image.path + "/" + ImageManifest.fileName, to: stagedManifest, sync: false) } catch {
            if let full = outOfSpace(error) { throw full }
            throw MapStoreError.notAnImage(path: image.path, reason: "\(ImageManifest.fileName): \(error)")
        }
        let staged = layout.staging + "/" + ImageManifest.storeFolder
        try FileSystem.makeDirectories(staged)
        let flag = cancellation
        let copy: ImageVerifier.StreamedCopy
        // A manifest that does not read as one is no image, as `mappack verify` says (exit 2).
        do {
            copy = try ImageVerifier.copyFolderStreaming(
                image.path, manifest: stagedManifest, to: staged, hashContents: false, jobs: ProcessInfo.processInfo.activeProcessorCount,
                writeback: nil, stop: { flag?.isCancelled == true })
        } catch {
            throw MapStoreError.notAnImage(path: image.path, reason: error.description)
        }
        try checkCancelled()
        // A failed write (a full disk) makes its files look missing: the cause comes first.
        if let failure = copy.copyFailure { throw failure }
        if let problem = copy.problems.first { throw MapStoreError.invalidImage(path: image.path, reason: problem.description) }
        CrashPoint.reach("install.midStaging", storage: layout.root)
        try checkCancelled()
        let seed = try stageSeed(of: image, expected: copy.manifest.cacheSeed)
        let signature = try? ReadableFile.contents(of: image.path + "/" + ImageManifest.signatureFileName, limit: 4096)
        if let signature { try FileSteps.writeDurably(signature, to: layout.staging + "/" + ImageManifest.signatureFileName) }
        return StagedImage(manifest: copy.manifest, seed: seed, signed: signature != nil)
    }

    /// Copies the image folder's cache seed into staging and checks it, when the manifest names one.
    private func stageSeed(of image: PreinstalledImage, expected: ImageCacheSeed?) throws -> String? {
        guard let expected else { return nil }
        let path = image.path + "/" + ImageManifest.cacheSeedFileName
        let target = layout.staging + "/" + ImageManifest.cacheSeedFileName
        guard FileSystem.exists(path) else {
            throw MapStoreError.invalidImage(path: image.path, reason: "\(ImageManifest.cacheSeedFileName): cache seed is missing")
        }
        try FileSystem.copyFile(path, to: target)
        try checkStagedSeed(target, expected: expected, image: image)
        return target
    }

    /// Checks a staged cache seed against the manifest's record: digest and size, then its rows.
    func checkStagedSeed(_ seed: String, expected: ImageCacheSeed, image: PreinstalledImage) throws {
        let (digest, size) = try SHA256.digestOfFile(seed)
        guard digest == expected.sha256, size == expected.size else {
            throw MapStoreError.invalidImage(
                path: image.path, reason: "\(ImageManifest.cacheSeedFileName): cache seed differs from the manifest (sha256 \(digest), \(size) bytes)"
            )
        }
        do { try MapCache.checkSeedRows(at: seed, entries: expected.entries) } catch MapStoreError.invalidCacheSeed(_, let reason) {
            throw MapStoreError.invalidImage(path: image.path, reason: "\(ImageManifest.cacheSeedFileName): \(reason)")
        }
    }

    /// Extracts a `.tar.zst` image into staging (made durable as a whole by `commitStaged`) and checks it in full:
    /// the extractor hashes as it writes, so complete validation costs nothing extra here. Entries
    /// are admitted by the rule `mappack verify` applies (`PackedImageEntry`).
    private func stageArchive(_ image: PreinstalledImage) throws -> StagedImage {
        let extracted = try extractImage(image, into: layout.staging)
        CrashPoint.reach("install.midStaging", storage: layout.root)
        try checkCancelled()
        let checked = try checkedManifest(at: layout.staging + "/" + ImageManifest.fileName, image: image)
        let manifest = checked.manifest
        let prefix = ImageManifest.storeFolder + "/"
        var found: [String: ExtractedFile] = [:]
        for file in extracted where file.path.string.hasPrefix(prefix) { found[String(file.path.string.dropFirst(prefix.count))] = file }
        for file in manifest.files {
            guard let got = found.removeValue(forKey: file.path.string) else {
                throw MapStoreError.invalidImage(path: image.path, reason: "\(file.path): file is missing")
            }
            guard got.size == file.size, got.sha256 == file.sha256 else {
                throw MapStoreError.invalidImage(path: image.path, reason: "\(file.path): content differs from the manifest")
            }
        }
        if let extra = found.keys.sorted().first {
            throw MapStoreError.invalidImage(path: image.path, reason: "\(extra): file is not in the manifest")
        }
        try FileSystem.makeDirectories(layout.staging + "/" + ImageManifest.storeFolder)
        var seed: String?
        if let expected = manifest.cacheSeed {
            guard let got = extracted.first(where: { $0.path.string == ImageManifest.cacheSeedFileName }) else {
                throw MapStoreError.invalidImage(path: image.path, reason: "\(ImageManifest.cacheSeedFileName): cache seed is missing")
            }
            guard got.size == expected.size, got.sha256 == expected.sha256 else {
                throw MapStoreError.invalidImage(
                    path: image.path,
                    reason: "\(ImageManifest.cacheSeedFileName): cache seed differs from the manifest (sha256 \(got.sha256), \(got.size) bytes)")
            }
            let staged = layout.staging + "/" + ImageManifest.cacheSeedFileName
            seed = staged
            do { try MapCache.checkSeedRows(at: staged, entries: expected.entries) } catch MapStoreError.invalidCacheSeed(_, let reason) {
                throw MapStoreError.invalidImage(path: image.path, reason: "\(ImageManifest.cacheSeedFileName): \(reason)")
            }
        }
        return StagedImage(manifest: manifest.header, seed: seed, signed: checked.signature != nil)
    }

    /// A folder holding the image's `manifest.json`, `store/` and seed: the image itself, or an
    /// extraction of the archive into `scratch`.
    func imageFolder(scratch: String) throws -> String {
        guard let image else { throw MapStoreError.imageNeededForRepair(reason: "no preinstalled image was offered") }
        guard image.isArchive else { return image.path }
        try FileSystem.removeTree(scratch)
        try FileSystem.makeDirectories(scratch)
        _ = try extractImage(image, into: scratch)
        return scratch
    }

    /// Extracts the packed `image` into the existing folder `folder`, admitting entries by the rule
    /// `mappack verify` applies (`PackedImageEntry`) and never more bytes than the filesystem has free.
    /// A full disk is `outOfSpace`, anything else `invalidImage`.
    private func extractImage(_ image: PreinstalledImage, into folder: String) throws -> [ExtractedFile] {
        let free = (try? FileSystem.freeBytes(at: folder)) ?? Int64.max
        let extractor = SafeExtractor(limits: ExtractionLimits(maxBytes: free, maxEntries: 4_000_000))
        var refusal: PackedImageEntry.Refusal?
        var rule = PackedImageEntry.Rule()
        var cancelled = false
        var entries = 0
        let flag = cancellation
        do {
            return try extractor.extract(archive: image.path, into: folder) { (entry, path) throws(ArchiveError) in
                entries += 1
                if flag?.isCancelled == true {
                    cancelled = true
                    throw ArchiveError.unsafePath(entry: path, reason: "cancelled")
                }
                if case .failure(let refused) = rule.admit(path, isDirectory: entry.kind == .directory) {
                    refusal = refused
                    throw ArchiveError.unsafePath(entry: path, reason: refused.description)
                }
            }
        } catch {
            if cancelled { throw MapStoreError.cancelled }
            if let refusal { throw MapStoreError.invalidImage(path: image.path, reason: refusal.description) }
            // The extractor's ledger sees every repeat first; it is the rule's refusal, said as `mappack verify` says it.
            if case .duplicatePath(let entry) = error {
                throw MapStoreError.invalidImage(path: image.path, reason: PackedImageEntry.Refusal.duplicate(entry: entry).description)
            }
            if let full = outOfSpace(error) { throw full }
            if case .tooLarge(_, let limit) = error, limit == free { throw MapStoreError.outOfSpace(storage: layout.root, path: folder, errno: nil) }
            // Not even one entry read: the file is no .tar.zst at all, not a damaged image.
            if entries == 0 { throw MapStoreError.notAnImage(path: image.path, reason: "not a .tar.zst archive (\(error.description))") }
            throw MapStoreError.invalidImage(path: image.path, reason: error.description)
        }
    }
}
