import Foundation
import MapFormat
import MapIO
import MapVerify

/// The store's state and operations; always used under `MapStore`'s lock.
final class StoreCore {
    var layout: StoreLayout
    /// The map cache, behind its own lock (shared with `MapStore` for cache readers).
    let caches: CacheAccess
    let image: PreinstalledImage?
    let fullValidation: Bool
    /// Whether `image` is used where it lies (`MapStore.Options.useImageInPlace`) rather than copied.
    var inPlace = false
    /// Keys an offered image must be signed with (none: signatures are not required).
    var trustedKeys: [TrustedKey] = []
    /// Open state database; nil while the storage has none.
    var state: StateDatabase?
    /// Raised when the task that runs the current operation is cancelled; nil outside cancellable work.
    var cancellation: CancellationFlag?
    /// Publishes a snapshot to readers in the middle of a write (set by `MapStore.write` for its body; nil
    /// outside one): where what readers see must change before the write ends, e.g. before files go.
    var publisher: ((StoreSnapshot) -> Void)?
    /// What the last transition removed from the map cache (an update that changes the version empties
    /// it); the update reads and clears it to tell the app (`StoreEvent.mapCacheReset`).
    var cacheReset: CacheReset?
    /// The readers' snapshot an in-place first start made inside its commit, while its id's hash ended,
    /// and the state's count of changed rows then; `takeSnapshot()` hands it out once instead of reading
    /// the state again, when nothing was written since (a cache seed's import, a remembered catalog URL).
    var installedSnapshot: (snapshot: StoreSnapshot, changes: Int64)?
    /// Regions `diagnose` found left `downloading` by a process that ended and paused; the next repair reports them.
    var pausedAtOpen: [RegionID] = []
    /// The added catalogs' kept copies, parsed, by the SHA-256 of their bytes (`keptTree(of:)`).
    var addedTrees: [CatalogID: (sha256: String, tree: RegionTree)] = [:]

    init(storage: String, cache: String, image: PreinstalledImage?, fullValidation: Bool) {
        layout = StoreLayout(root: FileSystem.absolute(storage))
        caches = CacheAccess(folder: FileSystem.absolute(cache))
        self.image = image
        self.fullValidation = fullValidation
    }

    /// Throws `MapStoreError.cancelled` when the current operation's task was cancelled. Called between
    /// files and phases, only before an operation's commit point.
    func checkCancelled() throws(MapStoreError) {
        try cancellation?.check()
    }

    /// Removes the staging folders and temporary files of processes that are gone (killed) from the
    /// storage folder, by the rule every staging entry follows (`StagingArea.sweepStale`): a live
    /// process's, this one's included, stay. True when there were any.
    @discardableResult
    func removeLeftovers() -> Bool {
        let found = (try? StagingArea.sweepStale(in: layout.root)) ?? false
        if found { try? FileSystem.syncDirectory(layout.root) }
        return found
    }

    /// What the storage holds, from its state database: whether anything is installed, whether an
    /// operation is pending (every write records one before it starts, so this catches all interrupted
    /// work) and whether its region states are known. No per-file work: damaged files are found by
    /// `verify`/`repair`. With `fullValidation`, also the kept manifest against the state and its
    /// signature, and every installed file by SHA-256.
    ///
    /// Without `fixing` (another process holds the storage's lock and is writing), it only reads: a
    /// staging folder, a pending row or a `downloading` region is that process's work under way, not a
    /// leftover, and stays as it is.
    func diagnose(fixing: Bool = true) -> StoreStatus {
        let hadLeftovers = fixing && removeLeftovers()
        // A missing or blank state beside installed data is a lost state: `repair()` rebuilds it from the
        // kept manifest and the files. Only leftovers without both mean an install never finished.
        let lostState = {
            if FileSystem.isDirectory(self.layout.store), FileSystem.exists(self.layout.manifest) { return StoreStatus.corrupted }
            return FileSystem.exists(self.layout.store) || FileSystem.exists(self.layout.manifest) || hadLeftovers ? .interruptedInstall : .empty
        }
        guard FileSystem.exists(layout.state) else { return lostState() }
        guard let state = try? StateDatabase(path: layout.state) else { return .corrupted }
        guard (try? state.isBlank) == false else { return lostState() }
        self.state = state
        // A store whose state names a base reads it in place, whichever options opened it.
        if base != nil { inPlace = true }
        if let format = try? state.meta(.format), format != StateDatabase.format { return .versionMismatch }
        let pending: PendingOperation?
        do { pending = try state.pending() } catch { return .corrupted }
        if let pending {
            if case .install = pending { return .interruptedInstall }
            return .interruptedOperation
        }
        guard (try? state.imageID) != nil, let installed = try? state.mapVersion else { return .interruptedInstall }
        if fixing {
            removeTransitionLeftovers()
            // Interrupted fetches that cannot be recorded paused (a read-only or full disk) are interrupted work
            // not settled: `repair()` settles it, or says why it cannot.
            do { pausedAtOpen = try pauseInterruptedFetches() } catch { return .interruptedOperation }
        }
        guard (try? regionStateProblems())?.isEmpty == true else { return .corrupted }
        guard FileSystem.isDirectory(layout.store), let kept = (try? FileSystem.status(keptManifestPath)) ?? nil, kept.isRegular else {
            return .corrupted
        }
        // A state older than the files (rolled back, restored from a backup, a flush the disk lost) names
        // another image than the kept manifest: only `repair()` makes the two agree again.
        if fixing, !keptManifestMatchesState(kept) { return .corrupted }
        if fullValidation {
            guard let kept = try? keptManifest(), (try? keptManifestProblems(kept, signature: true))?.isEmpty == true,
                (try? verify(full: true, manifest: kept.manifest))?.isEmpty == true
            else { return .corrupted }
        }
        if let offered = offeredFolderVersion(remembering: fixing), offered > installed { return .versionMismatch }
        return .ok
    }

    /// True when the kept manifest (whose `lstat` is `kept`) is the image the state records. Cheap when
    /// it is the file seen last time (its identity is remembered in `meta`); otherwise its id is found
    /// in its bytes (read from the end, no decoding) and, when it matches, the identity remembered.
    func keptManifestMatchesState(_ kept: FileSystem.Status) -> Bool {
        guard let state, let recorded = try? state.imageID else { return false }
        if (try? state.meta(.keptManifest)) == .some(kept.identity) { return true }
        guard let id = ImageVerifier.imageIDFromEnd(ofManifestAt: keptManifestPath), id == recorded else { return false }
        // Only a shortcut for the next open: when it cannot be remembered, that open reads the id again.
        do { try state.setMeta(.keptManifest, kept.identity) } catch {}
        return true
    }

    /// Takes in what other processes did while this one held no lock on the storage (called when it takes
    /// the lock with no write of its own under way): a state database they replaced is opened again, and
    /// regions a process that died fetching left `downloading` are paused, as at open.
    func adoptOtherProcessesWork() throws {
        state = nil
        if FileSystem.exists(layout.state), let reopened = try? StateDatabase(path: layout.state), (try? reopened.isBlank) == false {
            state = reopened
        }
        guard let state, (try? state.pending()) == nil else { return }
        let paused = try pauseInterruptedFetches()
        pausedAtOpen = Array(Set(pausedAtOpen).union(paused)).sorted()
    }

    /// Hands `snapshot` to the readers now (see `publisher`).
    func publishForReaders(_ snapshot: StoreSnapshot) {
        publisher?(snapshot)
    }

    /// Called only when no process writes the storage (this one took its lock, see `StorageLock`): regions left
    /// `downloading` — download rows, and installed rows an update was replacing — become `paused`, their
    /// installed data (if any) the committed version and their fetched bytes kept for a later download or
    /// update. Returns them; throws when the state cannot be read or written (nothing is said paused that is not).
    func pauseInterruptedFetches() throws -> [RegionID] {
        guard let state else { return [] }
        let downloads = try state.downloadStates().filter { $0.value == .downloading }.map(\.key)
        if !downloads.isEmpty { try state.setDownloadState(downloads, .paused) }
        let installed = try state.regionIDs(in: .downloading)
        if !installed.isEmpty { try state.setStates(Dictionary(uniqueKeysWithValues: installed.map { ($0, RegionState.paused) })) }
        return (downloads + installed).sorted()
    }

    /// The map version of the offered image when it is a folder (reading an archive's costs an
    /// extraction). Its manifest is decoded once and the version remembered in the state database with
    /// the manifest file's identity (device, inode, size, times), so later opens cost one `lstat`.
    func offeredFolderVersion(remembering: Bool = true) -> MapVersion? {
        // An image used in place is the store's base: a newer one there is taken over at open (`reconcileBase`).
        guard let image, !image.isArchive, !inPlace else { return nil }
        let path = image.path + "/" + ImageManifest.fileName
        guard let status = (try? FileSystem.status(path)) ?? nil, status.isRegular else { return nil }
        let key = StateMetaKey.offeredManifest
        if let remembered = (try? state?.meta(key)) ?? nil, let space = remembered.firstIndex(of: " "),
            remembered[..<space] == status.identity
        {
            return MapVersion(String(remembered[remembered.index(after: space)...]))
        }
        guard let manifest = try? offeredFolderManifest() else { return nil }
        // Only a shortcut for the next open: when it cannot be remembered, that open reads the manifest again.
        if remembering {
            do { try state?.setMeta(key, status.identity + " " + manifest.mapVersion.rawValue) } catch {}
        }
        return manifest.mapVersion
    }

    /// Installed regions whose stored state this library does not know, as one problem (none when all are known):
    /// they read as `needUpdate`, and `repair()` records them again from their files.
    func regionStateProblems() throws -> [StoreProblem] {
        guard let unknown = try state?.regionsWithUnknownState(), !unknown.isEmpty else { return [] }
        return [
            StoreProblem(
                kind: .unknownRegionState, path: StoreLayout.stateFileName, regions: unknown,
                detail: "\(unknown.count) region state\(unknown.count == 1 ? " is" : "s are") not one this library knows; "
                    + "call repair() (mappack store repair)")
        ]
    }

    /// The manifest kept in the storage.
    func storedManifest() throws -> ImageManifest {
        let path = keptManifestPath
        return try ImageVerifier.readManifest(try ReadableFile.contents(of: path, limit: ImageVerifier.maxManifestBytes), file: path).0
    }

    /// The offered image's manifest when the image is a folder (reading an archive's costs an extraction).
    func offeredFolderManifest() throws -> ImageManifest? {
        guard let image, !image.isArchive, !inPlace else { return nil }
        let path = image.path + "/" + ImageManifest.fileName
        return try ImageVerifier.readManifest(try ReadableFile.contents(of: path, limit: ImageVerifier.maxManifestBytes), file: path).0
    }

    /// The committed state, or `repairNeeded` when an operation is pending or nothing is installed.
    func committedState() throws -> StateDatabase {
        guard let state, try state.imageID != nil else { throw MapStoreError.notInstalled }
        if try state.pending() != nil { throw MapStoreError.repairNeeded(status: .interruptedOperation) }
        return state
    }

    /// `committedState()` for work that settles after the fact: nil when nothing is installed or an
    /// operation is pending (repair settles that one); throws only when the database cannot be read.
    func committedStateIfSettled() throws -> StateDatabase? {
        guard let state, try state.imageID != nil, try state.pending() == nil else { return nil }
        return state
    }

    /// The stored manifest narrowed to the installed regions and their bundles' files.
    func installedManifest(_ manifest: ImageManifest) throws -> ImageManifest {
        let regions = try state?.regions() ?? []
        let ids = Set(regions.map(\.id))
        let bundles = Set(regions.flatMap(\.bundles))
        var narrowed = manifest
        narrowed.regions = manifest.regions.filter { ids.contains($0.id) }
        narrowed.bundles = manifest.bundles.filter { bundles.contains($0.digest) }
        narrowed.files = manifest.files.filter { bundles.contains($0.bundle) }
        return narrowed
    }

    /// Compares the store tree with the installed part of `manifest`.
    func verify(full: Bool, manifest: ImageManifest? = nil) throws -> [StoreProblem] {
        let kept = try manifest ?? storedManifest()
        let installed = try installedManifest(kept)
        if let baseStore {
            return Self.checkInPlace(
                store: layout.store, base: baseStore, baseFiles: try baseFiles(kept: kept), installed: installed, full: full, stop: { false }
            ).map(StoreProblem.init)
        }
        return ImageVerifier.verifyTree(layout.store, manifest: installed, hashContents: full, jobs: ProcessInfo.processInfo.activeProcessorCount)
            .problems.map(StoreProblem.init)
    }

    /// Removes everything an install writes into the storage (not the cache); with `keepingStaging`,
    /// this process's staging folder (an image staged to replace the data) stays.
    func wipe(keepingStaging: Bool = false) throws {
        state = nil
        for path in [
            layout.store, layout.signature, layout.manifest, layout.state, layout.state + "-journal", layout.state + "-wal", layout.state + "-shm",
        ] {
            try FileSystem.removeTree(path)
        }
        if !keepingStaging {
            try FileSystem.removeTree(layout.staging)
            removeLeftovers()
        }
        if FileSystem.isDirectory(layout.root) { try FileSystem.syncDirectory(layout.root) }
    }
}
