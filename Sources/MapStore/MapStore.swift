import Foundation
import MapFetch
import MapFormat
import MapIO
import Synchronization

/// Offline map data on a device: the persistent map storage (regions installed from a
/// preinstall image, kept until deleted) and the map cache (LRU, bounded in bytes).
///
/// Every operation that changes the storage records itself in `state.sqlite` before it starts
/// and clears the record when it commits, so a process killed at any point leaves a storage
/// whose next `open` reports a non-`ok` `initialStatus` and whose `repair()` finishes or rolls
/// the work back. Processes sharing a storage folder (an app and its extension, an app and the CLI)
/// take turns writing: every write holds the storage's lock file (`StorageLock`), and a second writer
/// waits for the first; readers never take it.
public final class MapStore: Sendable {
    /// How `open` validates and installs.
    public struct Options: Sendable {
        /// Hash every file (SHA-256) when validating an image folder, and check the kept manifest and
        /// every installed file (SHA-256) at open; without it, an installed storage opens from its
        /// state database alone.
        public var fullValidation: Bool
        /// The cache's byte limit; nil keeps the limit stored in the cache (none at first).
        public var cacheLimitBytes: Int64?
        /// Hard-link files from a folder image on the same filesystem instead of copying them.
        /// Saves space and time, but the image then shares the files' bytes, so it can no longer
        /// restore a file corrupted in place; use only when the image is read-only.
        public var linkFilesFromFolderImage: Bool
        /// Reads the preinstalled image folder where it lies (a read-only system partition, a mounted
        /// `.erofs`) instead of copying it: the first start checks the image and writes only the state
        /// database; `path(of:)` answers the image's files, and what changes later (downloads, updates,
        /// repairs) is written to the storage folder and wins over the image. The image must stay at its
        /// path for the store's life; a newer image there is taken over at open (see `open`).
        public var useImageInPlace: Bool
        /// Public keys (the text of `mappack keygen`'s `.pub` files) images and catalogs must be signed
        /// with; empty accepts unsigned ones. With keys, an unsigned or wrongly signed image is refused,
        /// and so is a catalog that is unsigned, signed by another key, older than the newest seen,
        /// of a seen version with other bytes, or expired (see `MapStoreError.catalogUnsigned` and the
        /// cases after it). Keys a trusted catalog names as its `nextKey` are trusted for catalogs too.
        public var trustedPublicKeys: [String]
        /// The catalog the installed data comes from; remembered at open when the store knows none yet.
        /// Bundle URLs in the catalog are relative to it.
        public var catalogURL: URL?
        /// Attempts per bundle (in a row without progress) before a download fails with a remote error.
        public var fetchAttempts: Int
        /// Time before the first retry; doubles each failure.
        public var fetchRetryDelay: Duration
        /// Whether downloads may use metered networks.
        public var networkPolicy: NetworkPolicy
        /// Whether the network is metered when the store opens; the app reports changes with
        /// `networkChanged(metered:)`.
        public var networkIsMetered: Bool
        /// Updates by itself: a check at open (in the background) and every `autoUpdateInterval`, and
        /// `checkForUpdate` that finds a newer version runs `update` before returning; obeys the network
        /// policy (a held-back update waits for `networkChanged(metered: false)`).
        public var autoUpdate: Bool
        /// Time between automatic update checks while `autoUpdate` is on; nil checks only at open.
        public var autoUpdateInterval: Duration?
        /// The clock that judges catalog signature expiry; tests pin it.
        public var now: @Sendable () -> Date
        /// The clock the automatic checks wait on between two checks (`autoUpdateInterval`); tests
        /// drive one of their own instead of waiting for the wall clock.
        package var autoUpdateClock: any Clock<Duration> = ContinuousClock()

        /// Quick validation, no cache limit, files copied, no signature required.
        public init(
            fullValidation: Bool = false, cacheLimitBytes: Int64? = nil, linkFilesFromFolderImage: Bool = false, trustedPublicKeys: [String] = [],
            catalogURL: URL? = nil, fetchAttempts: Int = 5, fetchRetryDelay: Duration = .seconds(1), networkPolicy: NetworkPolicy = .init(),
            networkIsMetered: Bool = false, autoUpdate: Bool = false, autoUpdateInterval: Duration? = nil,
            now: @escaping @Sendable () -> Date = { Date() }, useImageInPlace: Bool = false
        ) {
            self.fullValidation = fullValidation
            self.useImageInPlace = useImageInPlace
            self.cacheLimitBytes = cacheLimitBytes
            self.linkFilesFromFolderImage = linkFilesFromFolderImage
            self.trustedPublicKeys = trustedPublicKeys
            self.catalogURL = catalogURL
            self.fetchAttempts = fetchAttempts
            self.fetchRetryDelay = fetchRetryDelay
            self.networkPolicy = networkPolicy
            self.networkIsMetered = networkIsMetered
            self.autoUpdate = autoUpdate
            self.autoUpdateInterval = autoUpdateInterval
            self.now = now
        }
    }

    /// The storage's status as found at open (after a first-start install, `ok`); never changes afterwards.
    public let initialStatus: StoreStatus
    let core: Mutex<StoreCore>
    let options: Options
    /// Policies the app may change at run time.
    let settings: Mutex<(networkPolicy: NetworkPolicy, autoUpdate: Bool)>
    /// Live tasks, their claims in the download cache, fetches, progress and the published snapshot, under
    /// one lock (`StoreRuntime`); readers copy the snapshot and never wait for a write.
    let runtime: Mutex<Runtime>
    /// Consumers of `events()`.
    let broadcaster = EventBroadcaster()

    /// The cache's access, shared with the core (which resets the cache in an update).
    let cacheAccess: CacheAccess
    /// The kept catalog and manifest facts region listings read without the lock.
    let listings = ListingCache()
    /// Automatic updates: schedule, reported network, a deferred update (`MapStore+AutoUpdate.swift`).
    let autoUpdates: AutoUpdateSchedule

    /// Whether another process was writing the storage when it was opened: then `initialStatus` is of the
    /// state that process had committed, and a pending operation in it is that process's work under way.
    package let otherProcessWritingAtOpen: Bool

    /// Test and CLI hooks, by a name each registrant picks: called with the storage folder when a write
    /// must wait for another holder of the storage's lock, another process or another instance (the CLI
    /// says so once); none in apps, whose writes just wait.
    package static let waitingForOtherProcess = Mutex<[String: @Sendable (_ storage: String) -> Void]>([:])

    /// This instance's hold on the storage's lock (`StorageLock`): two instances take turns like two processes.
    let holder: StorageLock.Holder

    private init(core: sending StoreCore, status: StoreStatus, options: Options, otherProcessWriting: Bool, holder: StorageLock.Holder) {
        self.holder = holder
        self.otherProcessWritingAtOpen = otherProcessWriting
        self.runtime = Mutex(Runtime(published: core.takeSnapshot()))
        self.cacheAccess = core.caches
        self.core = Mutex(core)
        self.initialStatus = status
        self.options = options
        self.settings = Mutex((options.networkPolicy, options.autoUpdate))
        self.autoUpdates = AutoUpdateSchedule(clock: options.autoUpdateClock)
    }

    /// Opens the storage folder `storage` and the cache folder `cache` (file URLs), creating them as needed.
    ///
    /// When the storage is empty and `preinstalled` is given, validates the image (manifest
    /// format, image id, sizes; SHA-256 of every file with `fullValidation` or for a `.tar.zst`),
    /// installs it durably and imports its cache seed. A refused image throws
    /// `MapStoreError.invalidImage` and leaves the storage empty. Staging leftovers of a killed
    /// process are removed. An interrupted storage is reported in `initialStatus`, not repaired:
    /// call `repair()`.
    ///
    /// An installed storage opens from its state database alone (no file of the store is read or
    /// listed, so open takes milliseconds whatever the store's size): interrupted work, a lost state,
    /// unknown region states and a newer offered image show in `initialStatus`; damaged or missing
    /// files are found by `verify(full:)` and restored by `repair()`. With `fullValidation`, open also
    /// checks the kept manifest and hashes every installed file, and reports damage as `.corrupted`.
    ///
    /// The work runs on threads of its own, never on the cooperative pool. Cancelling the calling
    /// task stops a first-start install between files or archive entries (after the hashed copy, when
    /// every file of a folder image is hashed while copied) and throws
    /// `MapStoreError.cancelled` with the storage left empty, so a later `open` installs afresh; once
    /// the install has committed, the call completes.
    public static func open(storage: URL, cache: URL, preinstalled: PreinstalledImage? = nil, options: Options = .init())
        async throws(MapStoreError) -> MapStore
    {
        try await MapStoreError.boundary("open", path: storage.storeFolderPath) {
            try await CancellationFlag.runBlocking { flag in
                try openBlocking(
                    storage: storage.storeFolderPath, cache: cache.storeFolderPath, preinstalled: preinstalled, options: options, cancellation: flag)
            }
        }
    }

    /// The body of `open`, on a blocking thread.
    private static func openBlocking(
        storage: String, cache: String, preinstalled: PreinstalledImage?, options: Options, cancellation: CancellationFlag
    ) throws -> MapStore {
        let core = StoreCore(storage: storage, cache: cache, image: preinstalled, fullValidation: options.fullValidation)
        core.inPlace = options.useImageInPlace
        core.trustedKeys = options.trustedPublicKeys.enumerated().map { TrustedKey(path: "trusted key \($0.offset + 1)", text: $0.element) }
        // An install needs the folder for its lock file; a plain open creates nothing.
        if preinstalled != nil { try FileSystem.makeDirectories(core.layout.root) }
        // Open itself is a reader: it fixes leftovers only when no other process is writing.
        let holder = StorageLock.Holder()
        var lease = try StorageLock.tryHold(root: core.layout.root, for: holder)
        var otherProcessWriting = lease == nil
        defer { lease?.release() }
        var status = core.diagnose(fixing: lease != nil)
        var installed = false
        // Waits for the process or instance that writes, then reads the store again, as its writer left it.
        func waitForWriter() throws {
            lease = try StorageLock.hold(root: core.layout.root, for: holder, cancellation: cancellation) { waitingNotice(core.layout.root) }
            otherProcessWriting = false
            core.state = nil
            status = core.diagnose()
        }
        if status == .empty, preinstalled != nil, lease == nil { try waitForWriter() }
        if status == .empty, let preinstalled {
            core.cancellation = cancellation
            if core.inPlace {
                try core.installInPlace(preinstalled)
            } else {
                try core.install(preinstalled, linkFiles: options.linkFilesFromFolderImage)
            }
            core.cancellation = nil
            status = .ok
            installed = true
        }
        // A new base (the next system image at the same place): taken over before anything reads the store. At the
        // base, its kept manifest is the new base's, which the state does not record: that alone reads as `corrupted`.
        // While another process or instance writes, the open waits for it, as a first start does: the store
        // cannot be read against a base whose files are gone.
        if core.inPlace, status == .ok || status == .corrupted, !installed, lease == nil, let preinstalled,
            core.baseChanged(preinstalled, remembering: false)
        {
            try waitForWriter()
        }
        if core.inPlace, status == .ok || status == .corrupted, !installed, lease != nil, let preinstalled, core.baseChanged(preinstalled) {
            status = try core.reconcileBase(preinstalled)
            installed = status == .ok
        }
        if let limit = options.cacheLimitBytes { try core.caches.with { try $0.setLimit(limit) } }
        var remembered = false
        if let url = options.catalogURL, status == .ok, lease != nil, core.catalogURL == nil {
            try core.state?.setMeta(.installedCatalogURL, url.absoluteString)
            remembered = true
        }
        let store = MapStore(core: core, status: status, options: options, otherProcessWriting: otherProcessWriting, holder: holder)
        if installed || remembered { store.keepInstalledVersionCatalog() }
        store.startAutomaticUpdates(interval: options.autoUpdateInterval)
        return store
    }

    /// Keeps the catalog the install came with, so regions can be listed and downloaded at the installed
    /// version before any update check (and after the server moved on to a newer version). The image
    /// does not carry its catalog: this reads the remembered catalog URL once, at the first start (or when
    /// `Options.catalogURL` is first remembered); when that fails or the catalog is of another version,
    /// nothing is kept and the first check or `setCatalogURL` keeps one.
    func keepInstalledVersionCatalog() {
        guard let url = core.withLock({ $0.keptCatalog() == nil ? $0.catalogURL : nil }),
            let (tree, bytes) = try? loadCatalogBlocking(url)
        else { return }
        // As when the read fails: nothing kept, and the first check or `setCatalogURL` keeps one.
        core.withLock { core in
            do { _ = try core.keepCatalog(tree, bytes: bytes, url: url) } catch {}
        }
    }

    /// The storage folder in use, a file URL (changes after `moveData(to:)`, `switchStorage(to:)`
    /// or a repair that finished a move).
    public var storage: URL { URL(fileURLWithPath: snapshot.root, isDirectory: true) }

    /// The storage folder's path, for messages and the layers below.
    var storageFolder: String { snapshot.root }

    /// The installed image's map version, nil when nothing is installed.
    public var mapVersion: MapVersion? { snapshot.mapVersion }

    /// The installed image's id, nil when nothing is installed.
    public var imageID: String? { snapshot.imageID }

    /// Finishes or rolls back an interrupted operation (re-installing from the offered image when an
    /// install never committed), then verifies every file in full, removes extra ones and restores
    /// missing or corrupt ones from what can provide them: the offered image (files it shipped,
    /// unchanged since), a verified bundle in the download cache, or the bundle fetched again by digest
    /// from the store's catalog (when the network policy allows). The report says which
    /// (`RepairReport.Action.restoredFiles(count:from:)`). Afterwards the storage verifies. Consumers
    /// of `events()` hear each region state the repair changed, then `.repaired` with the report.
    ///
    /// Runs on threads of its own. Cancelling the calling task stops the repair between phases and
    /// between restored files and throws `MapStoreError.cancelled`: every step taken so far is
    /// complete (each restored file is in place whole), and a later `repair()` goes on from there.
    public func repair() async throws(MapStoreError) -> RepairReport {
        try await MapStoreError.boundary("repair", path: storageFolder) {
            let link = options.linkFilesFromFolderImage
            var fetcher = RepairFetcher(permitted: networkPermitsFetching, client: FetchClient(retry: fetchRetryPolicy), failures: 0)
            var earlier: [RepairReport.Action] = []
            while true {
                do {
                    let pass = fetcher
                    var report = try await cancellableWrite { core throws -> RepairReport in
                        try core.repair(linkFiles: link, fetcher: pass)
                    }
                    report.actions = RepairReport.merged(earlier + report.actions)
                    broadcaster.send(.repaired(report))
                    return report
                } catch let retry as RepairRetry {
                    // The wait for a bundle's next attempt, with the store's lock let go: other calls go on.
                    earlier += retry.actions
                    fetcher.failures += 1
                    CrashPoint.reach("repair.retryWait", storage: storageFolder)
                    do { try await Task.sleep(for: .seconds(retry.delay)) } catch { throw MapStoreError.cancelled }
                }
            }
        }
    }

    /// Installed regions with names in `language` (BCP 47 like `de` or `de-CH`, then `de`), falling back
    /// to the image's language, English, then the id (as `availableRegions` does). Never waits for a write in progress (an update,
    /// a move, a repair): it answers from the state the last finished write left. Each region says where
    /// its bytes are and what deleting it frees (`bytesLocation`, `freedByDeletingInBytes`): for that the
    /// kept manifest is read once per image, and in an in-place store the storage's own tree is walked.
    public func regions(language: String? = nil) throws(MapStoreError) -> [InstalledRegion] {
        try MapStoreError.boundary("regions", path: storageFolder) {
            let snapshot = snapshot
            var regions = snapshot.installedRegions(language: language)
            // A kept manifest that cannot be read (a damaged store, which `verify` reports) leaves the defaults.
            let holdings = (try? listings.holdings(snapshot)) ?? [:]
            for index in regions.indices {
                guard let held = holdings[regions[index].id] else { continue }
                regions[index].bytesLocation = held.location
                regions[index].freedByDeletingInBytes = held.freed
            }
            return regions
        }
    }

    /// Deletes regions and their installed descendants, removing files no remaining region uses. Each
    /// deleted region is announced to the consumers of `events()` as `.regionStateChanged(id, .available)`.
    /// A region being downloaded (or paused) is dropped too: its downloads, and those of regions below
    /// a deleted one, are cancelled first (`cancelDownload`), their fetched bytes removed. A region that
    /// is neither installed nor downloading throws `unknownRegion` before anything changes.
    ///
    /// Runs on a thread of its own. A cancellation of the calling task that arrives before the
    /// deletion starts throws `MapStoreError.cancelled` and changes nothing; once files are being
    /// removed the deletion runs to its commit (a half-deleted region is not a state to leave).
    public func deleteRegions(_ ids: [RegionID]) async throws(MapStoreError) {
        try await MapStoreError.boundary("deleteRegions", path: storageFolder) {
            // Downloads of the regions (and of regions below them) are dropped first. What is installed is
            // decided under the storage's lock, from the state another process may have changed: the
            // snapshot before it may be stale while another writer holds the storage.
            let snapshot = snapshot
            let installedBefore = Set(snapshot.regions.map(\.id))
            let catalogs = catalogsOf(snapshot)
            var dropped = Set<RegionID>()
            for id in Set(ids.flatMap { offering($0, in: catalogs)?.subtree($0) ?? [$0] } + ids).sorted() where !installedBefore.contains(id) {
                let fetching = !downloads(fetching: id).isEmpty || Self.pausedDownload(id, in: snapshot)
                if fetching, try await cancelDownload(id) { dropped.insert(id) }
            }
            let cancelled = dropped
            try await cancellableWrite { core throws in
                let installed = Set(try core.committedState().regions(bundles: false).map(\.id))
                if let unknown = ids.first(where: { !installed.contains($0) && !cancelled.contains($0) }) {
                    throw MapStoreError.unknownRegion(unknown)
                }
                let deleting = ids.filter(installed.contains)
                if !deleting.isEmpty { try core.deleteRegions(deleting) }
            }
        }
    }

    /// The installed file for readers, as a file URL, by its store-relative path (as the manifest
    /// lists it); nil when nothing is installed or no regular file is there (the store folder holds
    /// only the installed regions' files: a delete removes a region's files, a download or an update
    /// adds them before it commits). One `lstat`; like `regions`, never waits for a write in progress.
    ///
    /// In a store that uses its image in place (`Options.useImageInPlace`) a file the storage folder
    /// does not hold is answered from the image, where it lies (a second `lstat`); files the device
    /// wrote later win, and the files of a deleted region are hidden.
    public func path(of storePath: StorePath) throws(MapStoreError) -> URL? {
        try MapStoreError.boundary("path", path: storageFolder) {
            // The folder of the same snapshot that says the version and the states: during a switch the old
            // tree's copy, so a reader never gets a new file with the old version.
            let snapshot = snapshot
            guard snapshot.imageID != nil else { return nil }
            let tail = "/" + storePath.string
            let full = snapshot.storeFolder + tail
            if let own = try FileSystem.status(full) {
                // In place, a hiding marker or a folder here hides the base's file.
                return own.isRegular ? URL(fileURLWithPath: full, isDirectory: false) : nil
            }
            guard let base = snapshot.baseStoreFolder, try FileSystem.status(base + tail)?.isRegular == true else { return nil }
            return URL(fileURLWithPath: base + tail, isDirectory: false)
        }
    }

    /// `path(of:)` for a path as text (`ImageFile.path` is a `StorePath` already; kept for callers
    /// that hold text): nil when `storePath` is not a `StorePath`, as no installed file can have it.
    public func path(of storePath: String) throws(MapStoreError) -> URL? {
        guard let checked = try? StorePath(validating: storePath) else { return nil }
        return try path(of: checked)
    }

    /// Moves the persistent storage to the folder `newStorage` (a file URL; new or empty): copy into a
    /// staging folder there, fsync, rename into place, commit, then remove the old copy. Killed at any
    /// point, the data is usable at exactly one of the two places after `repair()`. `progress`
    /// receives 0…1, and so do the consumers of `events()` (`StoreEvent.moveProgress`, then
    /// `.storageMoved`). The kept catalog and the download cache (paused downloads and updates) move
    /// too. Refused with `busy` while a download or an update is fetching.
    ///
    /// Runs on threads of its own. Cancelling the calling task before the commit stops the copy
    /// between files, removes what was copied to the destination and throws `MapStoreError.cancelled`:
    /// the store stays where it was, and a later `moveData` to the same folder starts afresh.
    public func moveData(to newStorage: URL, progress: @escaping @Sendable (Double) -> Void = { _ in }) async throws(MapStoreError) {
        let broadcaster = broadcaster
        let report: @Sendable (Double) -> Void = { fraction in
            progress(fraction)
            broadcaster.send(.moveProgress(fraction))
        }
        try await MapStoreError.boundary("moveData", path: storageFolder) {
            try await cancellableWrite { [self] core throws in
                guard runtime.withLock({ $0.fetching }) == 0 else {
                    throw MapStoreError.busy(
                        operation: "moveData",
                        reason: "downloads or an update are fetching into the storage; "
                            + "pause the downloads (DownloadTask.pause()) or let them finish, pause or cancel the update, then move")
                }
                try core.moveData(to: newStorage.storeFolderPath, progress: report)
            }
        }
        broadcaster.send(.storageMoved(storage))
    }

    /// True when the filesystem holding the storage has fewer than `bytes` free.
    public func mayBeOutOfSpace(for bytes: Int64) -> Bool {
        var folder = storageFolder
        while !FileSystem.exists(folder), folder != "/" { folder = FileSystem.parent(folder) }
        guard let free = try? FileSystem.freeBytes(at: folder) else { return true }
        return free < bytes
    }
}

extension MapStore {
    /// The installed state as the last write left it; never waits for a write in progress.
    var snapshot: StoreSnapshot { runtime.withLock { $0.published } }

    /// The store's run-time state (`StoreRuntime`) with the store's task types.
    typealias Runtime = StoreRuntime<DownloadTask, UpdateTask>

    /// Runs a write under the store's lock and, when it ends (also by failing), publishes what readers
    /// see and announces every region state it changed (see `publish`). Holds the storage's lock for
    /// it (see `holdStorage`), waiting for another process that writes; callers on the cooperative pool
    /// hold it already (`holdStorageOffPool`), so only `BlockingPool` threads wait here.
    func write<T: Sendable>(_ body: (StoreCore) throws -> T) throws -> T {
        let lease = try holdStorage(cancellation: nil)
        defer { lease.release() }
        return try writeHoldingStorage(body)
    }

    /// Holds the storage's lock across processes (`StorageLock`) for a write, waiting while another process
    /// holds it (blocking: on a `BlockingPool` thread), until `cancellation` is raised. When this process
    /// takes it afresh, another process may have written meanwhile: the core takes that in and readers
    /// see it (its region state changes are announced like this process's own).
    func holdStorage(cancellation: CancellationFlag?) throws -> StorageLease {
        let root = storageFolder
        let lease = try StorageLock.hold(root: root, for: holder, cancellation: cancellation) { MapStore.waitingNotice(root) }
        if lease.fresh {
            let remember = options.catalogURL
            try writeHoldingStorage { core throws in
                try core.adoptOtherProcessesWork()
                if let remember, core.catalogURL == nil, (try? core.committedState()) != nil {
                    try core.state?.setMeta(.installedCatalogURL, remember.absoluteString)
                }
            }
        }
        return lease
    }

    /// `holdStorage` from async work: waits on a `BlockingPool` thread and stops waiting when the calling
    /// task is cancelled (`MapStoreError.cancelled`).
    func holdStorageOffPool() async throws -> StorageLease {
        try await CancellationFlag.runBlocking { [self] flag in try holdStorage(cancellation: flag) }
    }

    /// Says that a write waits for another process or instance (`waitingForOtherProcess`).
    static func waitingNotice(_ storage: String) {
        for hook in waitingForOtherProcess.withLock({ Array($0.values) }) { hook(storage) }
    }

    /// `write` for a caller that holds the storage's lock.
    private func writeHoldingStorage<T: Sendable>(_ body: (StoreCore) throws -> T) throws -> T {
        try core.withLock { core throws -> T in
            core.publisher = { [self] snapshot in publish(snapshot) }
            defer {
                core.publisher = nil
                publish(core.snapshot())
            }
            return try body(core)
        }
    }

    /// The one place region states are announced: publishes `snapshot` and sends `regionStateChanged` for
    /// every region whose state differs from the snapshot it replaces (a region gone from the store and
    /// from the downloads reads as `available`), under the store's lock, so consumers of `events()` hear
    /// every change in commit order and, applying them to the snapshot before, get the one after.
    private func publish(_ snapshot: StoreSnapshot) {
        let changes = runtime.withLock { $0.publish(snapshot) }
        for (id, state) in changes { broadcaster.send(.regionStateChanged(id, state)) }
    }

    /// `write` on a `BlockingPool` thread, for async work (downloads, updates): a long write (a move, a
    /// repair) may hold the lock, and the wait for it must not hold one of the cooperative pool's few threads.
    func writeOffPool<T: Sendable>(_ body: @escaping @Sendable (StoreCore) throws -> T) async throws -> T {
        try await BlockingPool.run { [self] in try write(body) }
    }

    /// The core under the lock on a `BlockingPool` thread, for async work that only reads it (see `writeOffPool`).
    func readOffPool<T: Sendable>(_ body: @escaping @Sendable (StoreCore) throws -> T) async throws -> T {
        try await BlockingPool.run { [self] in try core.withLock { core throws -> T in try body(core) } }
    }

    /// `write` on a `BlockingPool` thread (never the cooperative pool), with the core's cancellation flag
    /// raised when the calling task is cancelled; the operation polls it up to its commit point.
    func cancellableWrite<T: Sendable>(_ body: @escaping @Sendable (StoreCore) throws -> T) async throws -> T {
        try await CancellationFlag.runBlocking { [self] flag in
            let lease = try holdStorage(cancellation: flag)
            defer { lease.release() }
            return try writeHoldingStorage { core throws -> T in
                core.cancellation = flag
                defer { core.cancellation = nil }
                return try body(core)
            }
        }
    }

    /// The map cache, behind its own lock: cache calls never wait for a storage write.
    var caches: CacheAccess { cacheAccess }

    /// Runs `body` with the cache under the cache's lock (not the store's).
    func withCache<T: Sendable>(_ body: (MapCache) throws -> T) throws -> T {
        try caches.with(body)
    }
}
