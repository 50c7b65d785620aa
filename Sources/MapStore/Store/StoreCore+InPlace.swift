import Foundation
import MapFormat
import MapIO
import MapVerify

/// In-place stores (`MapStore.Options.useImageInPlace`): the store's base is a read-only image folder
/// (a mounted `.erofs`, a system partition) read where it lies, and the storage folder holds only what
/// differs from it.
///
/// - `store/` holds the files written after the first start (downloads, updates, repairs), which win
///   over the base's, and hiding markers: a symbolic link to `StoreCore.hiddenMarkerTarget` at the path of
///   a base file that is not installed (a deleted region's, one an update dropped). A path resolves in
///   `store/` first (a regular file answers, a marker or a folder hides the base), then in the base's
///   `store/`. Transitions stage this tree like any other (`StoreCore+Transition.swift`), so its markers
///   switch with its files.
/// - `manifest.json` is the kept manifest once a download or an update wrote one; until then the
///   base's manifest is (`keptManifestPath`), and the state records the base's image id.
/// - The state records the base (`StateMetaKey.baseImage`, `.baseImageID`); its commits stay the commit points.
extension StoreCore {
    /// Where a hiding marker points (a name that never exists: the marker is never followed to a file).
    static let hiddenMarkerTarget = ".mappack-hidden-base-file"

    /// The base image folder of an in-place store, nil for a store that copied its image.
    var base: String? { (try? state?.meta(.baseImage)) ?? nil }

    /// The base's store tree, nil for a store that copied its image.
    var baseStore: String? { base.map { $0 + "/" + ImageManifest.storeFolder } }

    /// The kept manifest's path: the storage's own, or in an in-place store that has written none, the base's.
    var keptManifestPath: String {
        if let base, !FileSystem.exists(layout.manifest) { return base + "/" + ImageManifest.fileName }
        return layout.manifest
    }

    /// The kept manifest's signature's path, beside `keptManifestPath`.
    var keptSignaturePath: String {
        if let base, !FileSystem.exists(layout.manifest) { return base + "/" + ImageManifest.signatureFileName }
        return layout.signature
    }

    /// First start in place: checks `image` (format, id, signature with trusted keys; every file's
    /// SHA-256 with trusted keys or `fullValidation`, as a copy install does) and commits a state that
    /// names it as the base, beside an empty `store/`. No file of the image is copied or linked; its
    /// cache seed is imported from where it lies. On a refused image the storage is left empty.
    func installInPlace(_ image: PreinstalledImage) throws {
        do {
            try checkCancelled()
            guard FileSystem.isDirectory(image.path) else {
                throw FileSystem.exists(image.path)
                    ? MapStoreError.notAnImage(
                        path: image.path, reason: "an image used in place must be a folder (a mounted partition image or an unpacked image folder)")
                    : MapStoreError.notAnImage(path: image.path, reason: "no such file or folder")
            }
            guard FileSystem.exists(image.path + "/" + ImageManifest.fileName) else {
                throw MapStoreError.notAnImage(path: image.path, reason: "no \(ImageManifest.fileName)")
            }
            if let refusal = PackedImageEntry.refusals(inFolder: image.path).first {
                throw MapStoreError.invalidImage(path: image.path, reason: refusal.description)
            }
            // The manifest's id hash starts first (it is the first start's longest step), before anything is written.
            let skimmed = skimBase(image)
            try FileSystem.makeDirectoriesDurably(layout.root)
            let state = try StateDatabase(path: layout.state, marking: .install(imageID: image.path))
            self.state = state
            try FileSystem.syncDirectory(layout.root)
            CrashPoint.reach("install.afterMark")
            let checked: CheckedBase
            do {
                checked = try checkBase(image, skimmed: skimmed)
                try FileSystem.removeTree(layout.store)
                try FileSystem.makeDirectories(layout.store)
                try checkCancelled()
            } catch {
                do { try wipe() } catch {}
                throw error
            }
            try FileSystem.syncDirectory(layout.root)
            CrashPoint.reach("install.beforeCommit")
            // A skimmed manifest's id is confirmed last, inside the commit: its hash runs while the rows are
            // written and the readers' snapshot is read from them (the connection sees its own transaction).
            var made: (snapshot: StoreSnapshot, changes: Int64)?
            try state.commitInstall(
                checked.manifest, seedPending: checked.seed != nil, signed: checked.signed, meta: baseMeta(image, checked.manifest, kept: true),
                confirming: {
                    made = (self.snapshot(), state.db.totalChanges)
                    try checked.confirm?()
                })
            installedSnapshot = made
            CrashPoint.reach("install.afterCommit")
            if let seed = checked.seed { try importPendingSeed(seed, storeVersion: checked.manifest.mapVersion) }
        } catch {
            if (try? state?.imageID) ?? nil == nil {
                do { try wipe() } catch {}
            }
            throw MapStoreError.outOfSpace(error, storage: layout.root) ?? error
        }
    }

    /// The meta rows that name `image` (whose manifest is `manifest`) as the base. At the first start the
    /// base's manifest is the kept one too: its identity is remembered for both, so later opens compare
    /// one `lstat` instead of reading it (`keptManifestMatchesState`, `baseChanged`).
    private func baseMeta(_ image: PreinstalledImage, _ manifest: ManifestHeader, kept: Bool = false) -> [StateMetaKey: String] {
        let identity = ((try? FileSystem.status(image.path + "/" + ImageManifest.fileName)) ?? nil)?.identity ?? ""
        var meta: [StateMetaKey: String] = [.baseImage: image.path, .baseImageID: manifest.imageID]
        if let fingerprint = Self.baseFingerprint(image.path) { meta[.baseManifest] = fingerprint }
        if kept, !identity.isEmpty { meta[.keptManifest] = identity }
        return meta
    }

    /// What tells one base's manifest from another's without reading it: the file's identity and the digest
    /// of the signature beside it. The identity alone does not: a reproducible partition image fixes its
    /// files' times, inode numbers come out the same, and the next version's manifest may have the same
    /// size; a signature differs for every manifest. Nil for an unsigned base, whose id is read at every open.
    static func baseFingerprint(_ base: String) -> String? {
        guard let status = (try? FileSystem.status(base + "/" + ImageManifest.fileName)) ?? nil,
            let signature = try? ReadableFile.contents(of: base + "/" + ImageManifest.signatureFileName, limit: 4096)
        else { return nil }
        return status.identity + " " + SHA256.hex(signature)
    }

    /// What `checkBase` found in an image folder to be used in place.
    struct CheckedBase {
        var manifest: ManifestHeader
        /// A signature lies beside the manifest.
        var signed: Bool
        /// The cache seed's path in the image.
        var seed: String?
        /// The id check still under way (a skimmed manifest, `streamedBaseManifest`), which throws the
        /// image's refusal; nil when done. It must run, and pass, before anything is committed.
        var confirm: (() throws -> Void)?
    }

    /// The base's manifest read without its file list, its id's hash started (`streamedBaseManifest`);
    /// nil with trusted keys or `fullValidation` (everything is checked then), or for a manifest not
    /// as mappack writes it.
    private func skimBase(_ image: PreinstalledImage) -> ImageVerifier.SkimmedManifest? {
        fullValidation || !trustedKeys.isEmpty ? nil : ImageVerifier.readManifestSkippingFiles(at: image.path + "/" + ImageManifest.fileName)
    }

    /// Checks an image folder to be used in place: its manifest (format, id, signature with trusted
    /// keys), with trusted keys or `fullValidation` every file's SHA-256, and its cache seed.
    /// `skimmed`: `skimBase(image)`, made by the caller.
    private func checkBase(_ image: PreinstalledImage, skimmed: ImageVerifier.SkimmedManifest?) throws -> CheckedBase {
        let manifest: ManifestHeader
        let signed: Bool
        var confirm: (() throws -> Void)?
        if fullValidation || !trustedKeys.isEmpty {
            let checked = try checkedManifest(at: image.path + "/" + ImageManifest.fileName, image: image)
            let flag = cancellation
            let problems = ImageVerifier.verifyTree(
                image.path + "/" + ImageManifest.storeFolder, manifest: checked.manifest, hashContents: true,
                jobs: ProcessInfo.processInfo.activeProcessorCount, stop: { flag?.isCancelled == true }
            ).problems
            try checkCancelled()
            if let problem = problems.first { throw MapStoreError.invalidImage(path: image.path, reason: problem.description) }
            (manifest, signed) = (checked.manifest.header, checked.signature != nil)
        } else {
            // No file is read, nor the manifest's file list (`streamedBaseManifest`).
            (manifest, signed, confirm) = try streamedBaseManifest(image, skimmed: skimmed)
        }
        var seed: String?
        if let expected = manifest.cacheSeed {
            let path = image.path + "/" + ImageManifest.cacheSeedFileName
            guard FileSystem.exists(path) else {
                throw MapStoreError.invalidImage(path: image.path, reason: "\(ImageManifest.cacheSeedFileName): cache seed is missing")
            }
            try checkStagedSeed(path, expected: expected, image: image)
            seed = path
        }
        return CheckedBase(manifest: manifest, signed: signed, seed: seed, confirm: confirm)
    }

    /// The base's manifest (no trusted keys: no signature to check) and whether a signature lies beside
    /// it; errors as `checkedManifest` gives them. As mappack writes it (`skimmed`, from `skimBase`),
    /// its file list is skipped (`ImageVerifier.readManifestSkippingFiles`): everything else is read and checked there, and the
    /// id's hash of every byte is the returned check, still under way. Otherwise it is read as a stream,
    /// its entries' sizes checked but not their paths. Either way whatever reads the list later
    /// (`verify`, an update, a delete, a repair, the regions' holdings) reads it whole and checks it all.
    private func streamedBaseManifest(
        _ image: PreinstalledImage, skimmed: ImageVerifier.SkimmedManifest?
    ) throws -> (manifest: ManifestHeader, signed: Bool, confirm: (() throws -> Void)?) {
        let signature = try? ReadableFile.contents(of: image.path + "/" + ImageManifest.signatureFileName, limit: 4096)
        if let skimmed {
            let confirm = { () throws in
                let problem: VerifyProblem?
                do throws(ImageOpenError) { problem = try skimmed.idProblem() } catch {
                    throw MapStoreError.notAnImage(path: image.path, reason: error.description)
                }
                if let problem { throw MapStoreError.invalidImage(path: image.path, reason: problem.description) }
            }
            return (skimmed.manifest, signature != nil, confirm)
        }
        let (manifest, problems): (ManifestHeader, [VerifyProblem])
        // A manifest that does not read as one is no image, as `mappack verify` says (exit 2).
        // The paths of the entries are checked where they are used: every later reading of the list reads it whole.
        do {
            (manifest, problems) = try ImageVerifier.readManifestStreaming(at: image.path + "/" + ImageManifest.fileName, checkingPaths: false)
        } catch {
            throw MapStoreError.notAnImage(path: image.path, reason: error.description)
        }
        if let problem = problems.first { throw MapStoreError.invalidImage(path: image.path, reason: problem.description) }
        return (manifest, signature != nil, nil)
    }

    /// The base's manifest, decoded.
    func baseManifest() throws -> ImageManifest? {
        guard let base else { return nil }
        let path = base + "/" + ImageManifest.fileName
        return try ImageVerifier.readManifest(try ReadableFile.contents(of: path, limit: ImageVerifier.maxManifestBytes), file: path).0
    }

    /// The base's files by path (empty for a store that copied its image); `kept` is used when it is the base's manifest.
    func baseFiles(kept: ImageManifest? = nil) throws -> [String: ImageFile] {
        guard let id = try state?.meta(.baseImageID) else { return [:] }
        let manifest = kept?.imageID == id ? kept : try baseManifest()
        return Dictionary((manifest?.files ?? []).map { ($0.path.string, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// True when `file` and `other` hold the same bytes (path, size, SHA-256; the bundles may differ).
    static func sameBytes(_ file: ImageFile, _ other: ImageFile?) -> Bool {
        guard let other else { return false }
        return file.path == other.path && file.size == other.size && file.sha256 == other.sha256
    }

    /// True when `path` is a hiding marker.
    static func isHiddenMarker(_ path: String) -> Bool {
        guard let status = (try? FileSystem.status(path)) ?? nil, status.isSymlink else { return false }
        return (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) == hiddenMarkerTarget
    }

    /// Puts a hiding marker at `path` (a file of a writable store tree) unless something is there.
    static func placeHiddenMarker(_ path: String) throws {
        guard (try FileSystem.status(path)) == nil else { return }
        try FileSystem.makeDirectories(FileSystem.parent(path))
        do { try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: hiddenMarkerTarget) } catch {
            throw MapStoreError.io(operation: "hide a base file", path: path, reason: "\(error)")
        }
    }

    /// Removes the storage's copies of `files` and hides the base's: a deleted region's files in an in-place store.
    func removeOrHide(_ files: [ImageFile]) throws {
        guard let baseStore else { return }
        for (index, file) in files.enumerated() {
            let own = layout.storePath(file.path)
            if let status = try FileSystem.status(own), !status.isSymlink { try FileSystem.removeTree(own) }
            if try FileSystem.status(baseStore + "/" + file.path.string) != nil { try Self.placeHiddenMarker(own) }
            if index == 0 { CrashPoint.reach("delete.midFiles") }
        }
        for file in files { FileSteps.pruneEmptyFolders(above: layout.storePath(file.path), root: layout.store) }
        try FileSteps.syncFolders(layout.store)
    }

    /// In a transition's staged tree `stagedStore` of an in-place store: removes the staged copies of
    /// new files the base holds with the same bytes (`extracted`: the bundles extracted), so they are read
    /// from the base, and hides every base file `manifest` does not list.
    func stageAgainstBase(_ manifest: ImageManifest, extracted: Set<BundleDigest>, in stagedStore: String) throws {
        guard base != nil else { return }
        let baseFiles = try baseFiles()
        for file in manifest.files where extracted.contains(file.bundle) && Self.sameBytes(file, baseFiles[file.path.string]) {
            let staged = stagedStore + "/" + file.path.string
            try FileSystem.removeTree(staged)
            FileSteps.pruneEmptyFolders(above: staged, root: stagedStore)
        }
        let listed = Set(manifest.files.map(\.path.string))
        for path in baseFiles.keys.sorted() where !listed.contains(path) { try Self.placeHiddenMarker(stagedStore + "/" + path) }
    }

    /// The files of `manifest` a transition keeps by linking them from the live tree: in an in-place store
    /// only those the storage holds (the others are read from the base).
    func ownFiles(_ files: [ImageFile]) -> [ImageFile] {
        guard base != nil else { return files }
        return files.filter { ((try? FileSystem.status(layout.store + "/" + $0.path.string)) ?? nil)?.isRegular == true }
    }

    /// Copies the live writable tree of an in-place store into `destination` (an existing folder): files
    /// hard-linked (`link`) or copied, hiding markers made again.
    func copyOwnTree(to destination: String, link: Bool) throws {
        let entries = try DirectoryWalker.walk(layout.store)
        try FileSteps.copyFiles(entries.filter(\.isRegular).map { ($0.relativePath, $0.size) }, from: layout.store, to: destination, link: link)
        try copyHiddenMarkers(entries, to: destination)
    }

    /// Makes the hiding markers among `entries` (a walk of the live writable tree) again in `destination`.
    func copyHiddenMarkers(_ entries: [DirectoryWalker.Entry], to destination: String) throws {
        for entry in entries where !entry.isRegular && !entry.isDirectory && Self.isHiddenMarker(layout.store + "/" + entry.relativePath) {
            try Self.placeHiddenMarker(destination + "/" + entry.relativePath)
        }
    }

    /// Compares an in-place store's files with `installed`: each file where it is read from (the
    /// storage's tree when it holds it, else the base's when the base holds the same bytes, else it is
    /// missing from the storage's tree). Extra files in the storage's tree are problems; hiding markers
    /// and the base's files that are not installed are not.
    static func checkInPlace(
        store: String, base: String, baseFiles: [String: ImageFile], installed: ImageManifest, full: Bool, stop: @escaping @Sendable () -> Bool
    ) -> [VerifyProblem] {
        let entries = (try? DirectoryWalker.walk(store)) ?? []
        let own = Set(entries.filter(\.isRegular).map(\.relativePath))
        let markers = Set(
            entries.filter { !$0.isRegular && !$0.isDirectory && isHiddenMarker(store + "/" + $0.relativePath) }.map(\.relativePath))
        var inStore = installed
        var inBase = installed
        inStore.files = installed.files.filter { own.contains($0.path.string) || !sameBytes($0, baseFiles[$0.path.string]) }
        inBase.files = installed.files.filter { !own.contains($0.path.string) && sameBytes($0, baseFiles[$0.path.string]) }
        let jobs = ProcessInfo.processInfo.activeProcessorCount
        let ownProblems = ImageVerifier.verifyTree(store, manifest: inStore, hashContents: full, jobs: jobs, stop: stop).problems
            .filter { !($0.kind == .extra && markers.contains($0.path)) }
        let baseProblems = ImageVerifier.verifyTree(base, manifest: inBase, hashContents: full, jobs: jobs, stop: stop).problems
            .filter { $0.kind != .extra }
        return (ownProblems + baseProblems).sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
    }
}

/// A new base: the image at an in-place store's base path replaced (the next system image mounted at
/// the same place), found at open and taken over before the store is used.
extension StoreCore {
    /// True when `image` is not the base the state records: another folder, or another manifest there
    /// (the manifest file's identity first, then the id in its bytes). False for a store that copied its image.
    /// A same base's manifest identity is remembered for the next open unless `remembering` is false (an open
    /// without the storage's lock writes nothing).
    func baseChanged(_ image: PreinstalledImage, remembering: Bool = true) -> Bool {
        guard let state, let recorded = (try? state.meta(.baseImage)) ?? nil else { return false }
        if recorded != image.path { return true }
        let path = image.path + "/" + ImageManifest.fileName
        // A base that is not there is no new base: open reports the store `corrupted` and `verify` says why.
        guard FileSystem.exists(path) else { return false }
        let fingerprint = Self.baseFingerprint(image.path)
        if let fingerprint, (try? state.meta(.baseManifest)) == .some(fingerprint) { return false }
        guard let id = ImageVerifier.imageIDFromEnd(ofManifestAt: path) else { return true }
        guard id == (try? state.meta(.baseImageID)) else { return true }
        // Only a shortcut for the next open: when it cannot be remembered, that open reads the id again.
        if remembering, let fingerprint {
            do { try state.setMeta(.baseManifest, fingerprint) } catch {}
        }
        return false
    }

    /// Takes over the new base `image` (checked like a first start's): when the store is at a map version
    /// past the new base's (updated on the device), its own files stay, the copies the new base holds
    /// with the same bytes are removed, and base files it does not install are hidden; otherwise the
    /// store follows the new base: its own files, manifest and state go and it starts over in place
    /// (regions deleted or downloaded on the device are the base's again; the catalog URL is kept when
    /// the map version stays).
    /// Returns the status after: `corrupted` when files the store read from the old base are in neither
    /// the storage nor the new base (`repair()` fetches them).
    func reconcileBase(_ image: PreinstalledImage) throws -> StoreStatus {
        let state = try committedState()
        guard FileSystem.isDirectory(image.path) else { throw MapStoreError.notAnImage(path: image.path, reason: "no such folder") }
        let offered = try checkedManifest(at: image.path + "/" + ImageManifest.fileName, image: image).manifest
        if let installed = try state.mapVersion, installed > offered.mapVersion, FileSystem.exists(layout.manifest) {
            return try keepPastBase(image, offered, state: state)
        }
        // The catalog the data came from still serves the new base when the map version stays; otherwise
        // `Options.catalogURL` is remembered again at this open.
        let catalogURL = try state.mapVersion == offered.mapVersion ? state.meta(.installedCatalogURL) : nil
        // Catalogs the app added are the device's, not the base's: they and their regions stay.
        if try !state.addedCatalogs().isEmpty {
            return try followBaseKeepingCatalogs(image, offered, state: state, catalogURL: catalogURL)
        }
        // The pending install first: a kill from here on is an interrupted install, which `repair()`
        // (or the next first start, once the state is gone) ends by starting over on the new base.
        try state.markPending(.install(imageID: image.path))
        CrashPoint.reach("rebase.afterMark")
        try wipe()
        CrashPoint.reach("rebase.afterWipe")
        try installInPlace(image)
        if let catalogURL { try self.state?.setMeta(.installedCatalogURL, catalogURL) }
        return .ok
    }

    /// The transition kind of `followBaseKeepingCatalogs` (its crash points are `newBase.*`).
    static let rebaseKind = "newBase"

    /// `reconcileBase` following the new base in a store with added catalogs: one transition to the new
    /// base's manifest with the added catalogs' installed regions beside it. Their files stay in the
    /// storage (the only files kept); the base's regions are the new base's, all `completed` (deleted or
    /// updated on the device or not); the added catalogs' rows, kept copies and trust records stay as they
    /// were. A region an added catalog installed that the new base now has is the base's from then on.
    /// A kill before the commit leaves the old state, which the next open takes over again after `repair()`.
    private func followBaseKeepingCatalogs(
        _ image: PreinstalledImage, _ offered: ImageManifest, state: StateDatabase, catalogURL: String?
    ) throws -> StoreStatus {
        let checked = try checkBase(image, skimmed: skimBase(image))
        try checked.confirm?()
        let owners = try state.regionCatalogs()
        let offeredIDs = Set(offered.regions.map(\.id))
        let carried = try state.regions(bundles: false).filter { owners[$0.id] != nil && !offeredIDs.contains($0.id) }
        // Downloaded regions are listed in the storage's manifest (a download wrote one).
        let old = carried.isEmpty || !FileSystem.exists(layout.manifest) ? nil : try storedManifest()
        var target = offered
        var keptPaths = Set<String>()
        if let old {
            let carriedIDs = Set(carried.map(\.id))
            let regions = old.regions.filter { carriedIDs.contains($0.id) }
            let offeredBundles = Set(offered.bundles.map(\.digest))
            let bundles = Set(regions.flatMap(\.bundles)).subtracting(offeredBundles)
            let files = old.files.filter { bundles.contains($0.bundle) }
            keptPaths = Set(files.map(\.path.string))
            target.regions = (offered.regions + regions).sorted { $0.id < $1.id }
            target.bundles = (offered.bundles + old.bundles.filter { bundles.contains($0.digest) }).sorted { $0.digest < $1.digest }
            target.files = (offered.files + files).sorted { $0.path < $1.path }
            target.imageID = try SHA256.hex(target.bytesForID())
        }
        var states: [RegionID: RegionState] = Dictionary(uniqueKeysWithValues: target.regions.map { ($0.id, RegionState.completed) })
        for row in carried { states[row.id] = row.state }
        var meta = baseMeta(image, offered.header)
        meta[.language] = offered.language ?? ""
        // Empty reads as absent: a catalog of another version no longer serves the data, nor its window.
        meta[.installedCatalogURL] = catalogURL ?? ""
        if try state.mapVersion != offered.mapVersion {
            meta[.checkedCatalogURL] = ""
            meta[.supportedUntil] = ""
        }
        let resets = try state.mapVersion != offered.mapVersion
        _ = try transition(kind: Self.rebaseKind, regions: carried.map(\.id)) { _ in
            TransitionTarget(
                kind: Self.rebaseKind, manifest: target, archives: [:], infos: [:], states: states, meta: meta, resetsCache: resets,
                cacheKeeps: Set(carried.map(\.id)), keepsOwn: keptPaths)
        }
        if let seed = checked.seed {
            try self.state?.markPending(.cacheImport)
            try importPendingSeed(seed, storeVersion: offered.mapVersion)
        }
        return .ok
    }

    /// `reconcileBase` for a store past the new base's map version.
    private func keepPastBase(_ image: PreinstalledImage, _ offered: ImageManifest, state: StateDatabase) throws -> StoreStatus {
        let installed = try installedManifest(storedManifest()).files
        let newBase = Dictionary(offered.files.map { ($0.path.string, $0) }, uniquingKeysWith: { first, _ in first })
        let listed = Set(installed.map(\.path.string))
        for path in newBase.keys.sorted() where !listed.contains(path) { try Self.placeHiddenMarker(try layout.storePath(path)) }
        var missing = 0
        for file in installed {
            let own = layout.storePath(file.path)
            let ownStatus = try FileSystem.status(own)
            if Self.sameBytes(file, newBase[file.path.string]) {
                if ownStatus?.isRegular == true {
                    try FileSystem.removeTree(own)
                    FileSteps.pruneEmptyFolders(above: own, root: layout.store)
                }
            } else if ownStatus?.isRegular != true {
                missing += 1
            }
        }
        // Markers of paths the new base does not have hide nothing.
        for entry in try DirectoryWalker.walk(layout.store) where !entry.isRegular && !entry.isDirectory && newBase[entry.relativePath] == nil {
            if Self.isHiddenMarker(layout.store + "/" + entry.relativePath) { try FileSystem.removeTree(layout.store + "/" + entry.relativePath) }
        }
        try FileSteps.syncFolders(layout.store)
        CrashPoint.reach("rebase.beforeCommit")
        let meta = baseMeta(image, offered.header)
        try state.db.transaction { for (key, value) in meta { try state.setMeta(key, value) } }
        return missing == 0 ? .ok : .corrupted
    }
}
