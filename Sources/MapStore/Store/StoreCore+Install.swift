import Foundation
import MapFormat
import MapIO

/// First-start install: validate, stage, fsync, rename into place, commit, import the cache seed.
extension StoreCore {
    /// Installs `image` into the (empty) storage. On a refused image the storage is left empty.
    func install(_ image: PreinstalledImage, linkFiles: Bool) throws {
        try FileSystem.makeDirectories(layout.root)
        let state = try StateDatabase(path: layout.state)
        self.state = state
        try state.markPending(.install(imageID: image.path))
        try FileSystem.syncDirectory(layout.root)
        CrashPoint.reach("install.afterMark")
        let staged: (manifest: ImageManifest, seed: String?)
        do {
            try FileSystem.removeTree(layout.staging)
            try FileSystem.makeDirectories(layout.staging)
            staged = image.isArchive ? try stageArchive(image) : try stageFolder(image, link: linkFiles)
        } catch {
            try? wipe()
            throw error
        }
        CrashPoint.reach("install.afterStaging")
        try FileSteps.syncFolders(layout.staging)
        CrashPoint.reach("install.beforeRename")
        try FileSystem.rename(layout.staging + "/" + ImageManifest.storeFolder, to: layout.store)
        CrashPoint.reach("install.afterRename")
        try FileSystem.rename(layout.staging + "/" + ImageManifest.fileName, to: layout.manifest)
        try FileSystem.syncDirectory(layout.root)
        CrashPoint.reach("install.beforeCommit")
        try state.commitInstall(staged.manifest, seedPending: staged.seed != nil)
        CrashPoint.reach("install.afterCommit")
        if let seed = staged.seed { try importPendingSeed(seed, storeVersion: staged.manifest.mapVersion) }
        try FileSystem.removeTree(layout.staging)
    }

    /// Imports the seed and clears the pending import; a seed older than the store is skipped, not fatal.
    func importPendingSeed(_ seed: String, storeVersion: MapVersion) throws {
        do {
            _ = try cache().importSeed(seed, storeVersion: storeVersion)
        } catch MapStoreError.seedOlderThanStore {
            // The store is usable without its seed; an older seed would only serve stale data.
        }
        CrashPoint.reach("cache.afterImport")
        try state?.clearPending()
    }

    /// Reads and checks a manifest: format, image id, derived sizes.
    private func checkedManifest(at path: String, image: PreinstalledImage) throws -> ImageManifest {
        let data: Data
        do { data = try ReadableFile.contents(of: path, limit: ImageVerifier.maxManifestBytes) } catch {
            throw MapStoreError.invalidImage(path: image.path, reason: "\(ImageManifest.fileName): \(error)")
        }
        let (manifest, problems): (ImageManifest, [VerifyProblem])
        do { (manifest, problems) = try ImageVerifier.readManifest(data, file: path) } catch {
            throw MapStoreError.invalidImage(path: image.path, reason: error.description)
        }
        if let problem = problems.first { throw MapStoreError.invalidImage(path: image.path, reason: problem.description) }
        let signature = try? ReadableFile.contents(of: FileSystem.parent(path) + "/" + ImageManifest.signatureFileName, limit: 4096)
        do {
            if let problem = try ImageVerifier.checkSignature(manifestBytes: data, signature: signature, trusted: trustedKeys) {
                throw MapStoreError.invalidImage(path: image.path, reason: problem.detail)
            }
        } catch let error as ImageOpenError {
            throw MapStoreError.invalidImage(path: image.path, reason: error.description)
        }
        return manifest
    }

    /// Validates a folder image (sizes; SHA-256 with `fullValidation`) and copies its store into staging.
    private func stageFolder(_ image: PreinstalledImage, link: Bool) throws -> (manifest: ImageManifest, seed: String?) {
        let manifest = try checkedManifest(at: image.path + "/" + ImageManifest.fileName, image: image)
        let problems = ImageVerifier.verifyTree(image.path + "/" + ImageManifest.storeFolder, manifest: manifest,
                                                hashContents: fullValidation, jobs: ProcessInfo.processInfo.activeProcessorCount).problems
        if let problem = problems.first { throw MapStoreError.invalidImage(path: image.path, reason: problem.description) }
        var seed: String?
        if let expected = manifest.cacheSeed {
            let path = image.path + "/" + ImageManifest.cacheSeedFileName
            let size = try FileSystem.status(path)?.size
            let digest = fullValidation ? (try? SHA256.hexOfFile(path))?.hex : expected.sha256
            if size == expected.size && digest == expected.sha256 { seed = path }
        }
        try FileSystem.makeDirectories(layout.staging + "/" + ImageManifest.storeFolder)
        try FileSteps.copyFiles(manifest.files.map { ($0.path, $0.size) }, from: image.path + "/" + ImageManifest.storeFolder,
                                to: layout.staging + "/" + ImageManifest.storeFolder, link: link) { _, index in
            if index == 0 { CrashPoint.reach("install.midStaging") }
        }
        try FileSteps.writeDurably(try manifest.canonicalBytes(), to: layout.staging + "/" + ImageManifest.fileName)
        return (manifest, seed)
    }

    /// Extracts a `.tar.zst` image into staging (every file fsynced) and checks it in full:
    /// the extractor hashes as it writes, so complete validation costs nothing extra here.
    private func stageArchive(_ image: PreinstalledImage) throws -> (manifest: ImageManifest, seed: String?) {
        let free = (try? FileSystem.freeBytes(at: layout.root)) ?? Int64.max
        let extractor = SafeExtractor(limits: ExtractionLimits(maxBytes: free, maxEntries: 4_000_000), durable: true)
        let extracted: [ExtractedFile]
        do { extracted = try extractor.extract(archive: image.path, into: layout.staging) } catch {
            throw MapStoreError.invalidImage(path: image.path, reason: error.description)
        }
        CrashPoint.reach("install.midStaging")
        let manifest = try checkedManifest(at: layout.staging + "/" + ImageManifest.fileName, image: image)
        let prefix = ImageManifest.storeFolder + "/"
        var found: [String: ExtractedFile] = [:]
        for file in extracted where file.path.hasPrefix(prefix) { found[String(file.path.dropFirst(prefix.count))] = file }
        for file in manifest.files {
            guard let got = found.removeValue(forKey: file.path) else { throw MapStoreError.invalidImage(path: image.path, reason: "\(file.path): file is missing") }
            guard got.size == file.size, got.sha256 == file.sha256 else {
                throw MapStoreError.invalidImage(path: image.path, reason: "\(file.path): content differs from the manifest")
            }
        }
        if let extra = found.keys.sorted().first { throw MapStoreError.invalidImage(path: image.path, reason: "\(extra): file is not in the manifest") }
        try FileSystem.makeDirectories(layout.staging + "/" + ImageManifest.storeFolder)
        var seed: String?
        if let expected = manifest.cacheSeed, let got = extracted.first(where: { $0.path == ImageManifest.cacheSeedFileName }),
           got.size == expected.size, got.sha256 == expected.sha256 {
            seed = layout.staging + "/" + ImageManifest.cacheSeedFileName
        }
        return (manifest, seed)
    }

    /// A folder holding the image's `manifest.json`, `store/` and seed: the image itself, or an
    /// extraction of the archive into `scratch`.
    func imageFolder(scratch: String) throws -> String {
        guard let image else { throw MapStoreError.imageNeededForRepair(reason: "no preinstalled image was offered") }
        guard image.isArchive else { return image.path }
        try FileSystem.removeTree(scratch)
        try FileSystem.makeDirectories(scratch)
        let free = (try? FileSystem.freeBytes(at: scratch)) ?? Int64.max
        do { _ = try SafeExtractor(limits: ExtractionLimits(maxBytes: free, maxEntries: 4_000_000), durable: false).extract(archive: image.path, into: scratch) } catch {
            throw MapStoreError.invalidImage(path: image.path, reason: error.description)
        }
        return scratch
    }
}
