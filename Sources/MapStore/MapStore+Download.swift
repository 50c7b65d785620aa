import Foundation
import MapFetch
import MapFormat
import MapIO
import Synchronization

/// Run-time downloads: starting them, the catalog regions they offer (with details) and the space they need.
extension MapStore {
    /// Downloads `regions` (with their descendants) from the store's catalog and installs them
    /// atomically beside what is installed; bundles already on the device are not fetched again.
    /// Several tasks may run at once. A region paused earlier (also in a process that was killed)
    /// resumes from the bytes already fetched.
    ///
    /// Throws at once when nothing is installed or the network policy forbids the current network
    /// (`meteredNetworkDisallowed`); catalog, fetch and install failures arrive as `.failed` events
    /// and from `wait()`. Never waits for a write in progress (a move, a repair, an update's install):
    /// the task starts its work when that write has ended.
    ///
    /// `catalog` names the store's catalog the regions are of; nil takes the catalog whose kept copy offers
    /// them (region ids are unique across a store's catalogs). Regions of several catalogs are refused
    /// (`regionsOfSeveralCatalogs`): start one download per catalog.
    public func download(regions: [RegionID], catalog: CatalogID? = nil) throws(MapStoreError) -> DownloadTask {
        try MapStoreError.boundary("download", path: storageFolder) {
            try checkInstalledWithoutWaiting()
            guard networkPermitsFetching else { throw MapStoreError.meteredNetworkDisallowed(regions: regions) }
            let task = DownloadTask(store: self, regions: regions, catalog: catalog)
            runtime.withLock { $0.started(download: task) }
            task.start()
            return task
        }
    }

    /// Returns once no write holds the store's lock, having waited (if at all) on a `BlockingPool` thread:
    /// a task started during a long write (a move, a repair, an install) waits there, not on a thread of
    /// the cooperative pool, whose few threads the app's other async work needs.
    func waitForWriteInProgress() async {
        guard core.withLockIfAvailable({ _ in true }) == nil else { return }
        await BlockingPool.value { [self] in core.withLock { _ in } }
    }

    /// Throws `notInstalled`, or `repairNeeded` for an interrupted operation, before a task starts. Never
    /// waits for a write in progress (a move, a repair, an install): then the published state answers
    /// whether anything is installed, and the task checks the rest when the write has ended.
    func checkInstalledWithoutWaiting() throws {
        let checked = try core.withLockIfAvailable { core throws -> Bool in
            do { _ = try core.committedState() } catch MapStoreError.repairNeeded(let status) {
                // The pending work of another process that is writing now is under way, not interrupted:
                // the task waits for that process and checks again.
                guard StorageLock.heldElsewhere(root: core.layout.root, by: holder) else { throw MapStoreError.repairNeeded(status: status) }
            }
            return true
        }
        if checked == nil, imageID == nil { throw MapStoreError.notInstalled }
    }

    /// Downloads `regions` (with their descendants) and waits until they are installed: `download(regions:)`,
    /// then `DownloadTask.wait()`. `progress` receives each region's bytes on the device so far (as the
    /// task's `.progress` events, and `progress(of:)`, say).
    ///
    /// Cancelling the calling task stops the download, keeps the bytes fetched so far (the regions are
    /// `paused`; a later download of them resumes from those bytes) and throws `MapStoreError.cancelled`.
    public func download(regions: [RegionID], progress: @escaping @Sendable (RegionID, RegionProgress) -> Void) async throws(MapStoreError) {
        if Task.isCancelled { throw MapStoreError.cancelled }
        let task = try download(regions: regions)
        let watcher = Task {
            for await case .progress(let region, let received, let total) in task.events {
                progress(region, RegionProgress(receivedBytes: received, totalBytes: total))
            }
        }
        try await MapStoreError.boundary("download", path: storageFolder) {
            defer { watcher.cancel() }
            try await withTaskCancellationHandler {
                try await task.wait()
            } onCancel: {
                task.stop()
            }
            // Every progress report is delivered before the call returns.
            await watcher.value
        }
    }

    /// The catalog a download of `task`'s regions uses (`StoreCore.downloadCatalog`): its kept copy of
    /// the version the device holds of it, else the one at its URL (kept then). A URL that serves another
    /// catalog than the one it is remembered for is refused (`unknownCatalog`): it never replaces it.
    func catalogForDownloads(_ task: DownloadTask) async throws -> (tree: RegionTree, url: URL, catalog: StoreCatalog) {
        let (catalog, kept) = try await readOffPool { core throws -> (StoreCatalog, RegionTree?) in
            let catalog = try core.downloadCatalog(for: task.regions, named: task.catalog)
            return (catalog, core.keptTree(of: catalog))
        }
        guard let url = catalog.url else { throw MapStoreError.noCatalogURL }
        if let kept { return (kept, url, catalog) }
        let (tree, bytes, _) = try await loadCatalog(url, trust: CatalogTrustTarget(catalog))
        _ = try await readOffPool { core throws in
            let served = try core.catalogServed(tree, url: url, expected: catalog)
            guard served.id == catalog.id else {
                throw MapStoreError.unknownCatalog(catalog: tree.catalog.catalog, url: url, catalogs: [catalog.id.rawValue])
            }
            try core.keep(tree, bytes: bytes, url: url, as: catalog)
        }
        return (tree, url, catalog)
    }

    /// The body of a `DownloadTask` run (first start or resume).
    func runDownload(_ task: DownloadTask) async {
        let key = ObjectIdentifier(task)
        var requested: [RegionID] = []
        // The requested regions and the descendants the plan installs with them: the task announces each one's state.
        var scope = task.regions
        // Held for the whole run (fetch and install): another process writing the storage meanwhile would
        // take this task's `downloading` regions for a dead process's. Waiting for it can be cancelled.
        var lease: StorageLease?
        defer { lease?.release() }
        do {
            lease = try await holdStorageOffPool()
            await waitForWriteInProgress()
            let (tree, url, catalog) = try await catalogForDownloads(task)
            let plan = try await readOffPool { [self] core throws -> StoreCore.DownloadPlan in
                let plan = try core.planDownload(tree: tree, catalog: catalog, ids: task.regions, catalogURL: url)
                // Claimed in the same step that plans, under the store's lock, where a cancelled task's
                // cleanup reads the claims: a bundle this task is about to fetch is never removed.
                runtime.withLock { $0.claim(Set(plan.requests.map(\.digest)), by: key) }
                return plan
            }
            requested = task.regions.filter { !(plan.regionBundles[$0]?.isEmpty ?? true) || plan.newRegions.contains($0) }
            scope = task.regions + plan.newRegions.filter { !task.regions.contains($0) }
            try await writeOffPool { core throws in try core.committedState().setDownloadState(plan.newRegions, .downloading) }
            for id in requested + plan.newRegions.filter({ !requested.contains($0) }) { task.emit(.stateChanged(id, .downloading)) }
            let received = Mutex<[BundleDigest: Int64]>([:])
            let sizes = Dictionary(plan.requests.map { ($0.digest, $0.size) }, uniquingKeysWith: { first, _ in first })
            let archives = try await fetch(
                plan.requests,
                onBundle: { event in
                    let update: (BundleDigest, Int64)?
                    switch event {
                    case .progress(let digest, let bytes, _): update = (digest, bytes)
                    case .verified(let digest, let size), .alreadyCached(let digest, let size): update = (digest, size)
                    default: update = nil
                    }
                    guard let (digest, bytes) = update else { return }
                    let totals = received.withLock { map -> [(RegionID, Int64, Int64)] in
                        map[digest] = bytes
                        return plan.regionBundles.filter { $0.value.contains(digest) }.map { region, bundles in
                            (region, bundles.reduce(0) { $0 + (map[$1] ?? 0) }, bundles.reduce(0) { $0 + (sizes[$1] ?? 0) })
                        }
                    }
                    for (region, got, total) in totals { task.emit(.progress(region, receivedBytes: got, totalBytes: total)) }
                }, progress: { _, _ in })
            CrashPoint.reach("download.afterFetch")
            // A pause, cancel or stop that came in while the fetch ended is honoured here; later ones are refused.
            guard task.control.beginInstall() else { throw MapStoreError.cancelled }
            try await BlockingPool.run { [self] in
                try write { core throws in
                    try core.applyDownload(tree: tree, catalog: catalog, ids: task.regions, catalogURL: url, archives: archives)
                }
            }
            for id in scope { task.emit(.stateChanged(id, .completed)) }
            task.emit(.completed(task.regions))
            task.finish(.success(()))
            await BlockingPool.value { [self] in settlePausedTasks() }
        } catch {
            // As at the public boundary: a file or database failure keeps its path and errno (`.local`).
            let failure = MapStoreError.wrapping(error, operation: "download", path: storageFolder)
            let cancelled: Bool
            if case .cancelled = failure { cancelled = true } else { cancelled = Task.isCancelled }
            // Stopped while waiting for another process: this run changed nothing to record.
            let holding = lease != nil
            await settle(task, failure: failure, cancelled: cancelled, downloadSettling(task, scope: scope, recording: holding))
        }
    }

    /// A download's part of settling a stopped run (`settle`): `scope` is the regions it announces (the
    /// requested ones and the descendants its plan brings); `recording` is false when the run changed
    /// nothing in the state (stopped while waiting for another process), so there is nothing to record.
    func downloadSettling(_ task: DownloadTask, scope: [RegionID], recording: Bool) -> RunSettling {
        // Fetched bytes stay for a later attempt unless cancelled: the regions are paused, not lost.
        let recordPaused: @Sendable () async throws -> Void = { [self] in
            guard recording else { return }
            try await writeOffPool { [self] core throws in try core.state?.setDownloadState(notInstalled(task.regions, core), .paused) }
        }
        return RunSettling(
            recordPaused: recordPaused,
            announcePaused: { for id in scope { task.emit(.stateChanged(id, .paused)) } },
            endKeepingBytes: {
                try await recordPaused()
                for id in scope { task.emit(.stateChanged(id, .paused)) }
            },
            // Also when cancelled while waiting for the storage (a resumed run): earlier runs left fetched
            // bytes and `paused` rows, which a cancel removes.
            endRemovingBytes: { [self] in try await BlockingPool.run { [self] in try cleanUpCancelled(task) } },
            failed: { _ in try await recordPaused() })
    }

    /// Finishes paused tasks whose regions (with their catalog descendants) are all installed now,
    /// e.g. by another task: their `wait()` returns and their events end with `.completed`.
    func settlePausedTasks() {
        let paused = runtime.withLock { $0.liveDownloads }.filter { $0.phase == .paused }
        guard !paused.isEmpty else { return }
        // From the snapshot the finished download published, and the kept catalog parsed once: no lock.
        let snapshot = snapshot
        let installed = Set(snapshot.regions.map(\.id))
        let catalogs = catalogsOf(snapshot)
        let done = paused.filter { task in
            task.regions.allSatisfy { id in installed.contains(id) && (offering(id, in: catalogs)?.subtree(id).allSatisfy(installed.contains) ?? true)
            }
        }
        for task in done where task.control.completeElsewhere() {
            var scope = task.regions
            for id in task.regions { scope += (offering(id, in: catalogs)?.subtree(id) ?? []).filter { !scope.contains($0) } }
            for id in scope { task.emit(.stateChanged(id, .completed)) }
            task.emit(.completed(task.regions))
            task.finish(.success(()))
        }
    }

    /// `ids` and their catalog descendants that are not installed (rows of the downloads table).
    func notInstalled(_ ids: [RegionID], _ core: StoreCore) throws -> [RegionID] {
        guard let state = core.state else { return [] }
        let installed = Set(try state.regions().map(\.id))
        let downloads = try state.downloadStates().keys
        var out = Set(ids.filter { !installed.contains($0) })
        for catalog in try core.storeCatalogs() {
            guard let tree = core.keptTree(of: catalog) else { continue }
            for id in ids where tree.region(id) != nil { out.formUnion(tree.subtree(id).filter { !installed.contains($0) }) }
        }
        return Array(out.intersection(Set(downloads).union(ids)))
    }

    /// Removes a cancelled task's fetched data (what no other live task claims) and its download rows, under
    /// the store's lock where tasks take their claims; the task announces its regions and the descendants
    /// they would have brought `available`. A task whose regions no longer plan (the catalog moved on)
    /// clears the rows of its regions that are not installed; its fetched bytes are kept, since no plan
    /// names them.
    func cleanUpCancelled(_ task: DownloadTask) throws {
        let owner = ObjectIdentifier(task)
        let cleared = try write { [self] core throws -> [RegionID] in
            let plan: StoreCore.DownloadPlan?
            let catalog = try? core.downloadCatalog(for: task.regions, named: task.catalog)
            if let catalog, let tree = core.keptTree(of: catalog), let url = catalog.url {
                do { plan = try core.planDownload(tree: tree, catalog: catalog, ids: task.regions, catalogURL: url) } catch MapStoreError
                    .unknownCatalogRegion, MapStoreError.updateRequired
                {
                    plan = nil
                }
            } else {
                plan = nil
            }
            guard let plan else {
                runtime.withLock { $0.release(owner) }
                let rows = try notInstalled(task.regions, core)
                try core.state?.setDownloadState(rows, nil)
                return rows
            }
            let removable = runtime.withLock { $0.cleanup(Set(plan.requests.map(\.digest)), of: owner) }
            try core.removeDownloads(removable)
            try core.state?.setDownloadState(plan.newRegions, nil)
            return plan.newRegions
        }
        for id in task.regions + cleared.filter({ !task.regions.contains($0) }) { task.emit(.stateChanged(id, .available)) }
    }

    /// Catalog regions not installed, with names in `language`, their state (`available`,
    /// `downloading`, `paused`), the bytes still to download and their catalog: of every catalog of the
    /// store (the image's first, then the added ones, each sorted by id), or of `catalog` alone. Uses each
    /// catalog's kept copy of the version the device holds of it (see `setCatalogURL`, `addCatalog`); a
    /// catalog with none kept offers nothing. Never waits for a write in progress: it answers from the
    /// state the last finished write left.
    public func availableRegions(language: String? = nil, catalog: CatalogID? = nil) throws(MapStoreError) -> [RegionDetails] {
        try MapStoreError.boundary("availableRegions", path: storageFolder) {
            let snapshot = try committedSnapshot()
            let catalogs = catalogsOf(snapshot)
            if let catalog, !catalogs.contains(where: { $0.catalog.id == catalog }) {
                throw MapStoreError.unknownCatalog(catalog: catalog.rawValue, url: nil, catalogs: catalogs.map(\.catalog.id.rawValue))
            }
            let installed = Set(snapshot.regions.map(\.id))
            let device = try DeviceView(snapshot, trees: catalogs.compactMap(\.tree), listings: listings)
            var out: [RegionDetails] = []
            for (entry, tree) in catalogs where catalog == nil || entry.id == catalog {
                guard let tree else { continue }
                out += try tree.regions.map(\.id).sorted().filter { !installed.contains($0) }.map {
                    try details($0, tree: tree, catalog: entry.id, device: device, language: language)
                }
            }
            return out
        }
    }

    /// Details of a catalog or installed region: names, children, cities, release time, centre, bounding
    /// box, state, and sizes (still to download, on disk once installed). Never waits for a write in
    /// progress. A region installed but not in the kept catalog is described from the kept manifest.
    public func regionDetails(_ id: RegionID, language: String? = nil) throws(MapStoreError) -> RegionDetails {
        try MapStoreError.boundary("regionDetails", path: storageFolder) {
            let snapshot = try committedSnapshot()
            let catalogs = catalogsOf(snapshot)
            if let (entry, tree) = catalogs.lazy.compactMap({ entry in entry.tree.flatMap { $0.region(id) != nil ? (entry.catalog, $0) : nil } })
                .first
            {
                let device = try DeviceView(snapshot, trees: catalogs.compactMap(\.tree), listings: listings)
                return try details(id, tree: tree, catalog: entry.id, device: device, language: language)
            }
            guard let row = snapshot.regions.first(where: { $0.id == id }) else { throw MapStoreError.unknownRegion(id) }
            let manifest = try StoreLayout(root: snapshot.root).keptManifest()
            guard let region = manifest.region(id) else { throw MapStoreError.unknownRegion(id) }
            return RegionDetails(
                id: id, parent: region.parent, children: manifest.regions.filter { $0.parent == id }.map(\.id).sorted(),
                name: RegionName.pick(names: region.names, language: language, imageLanguage: manifest.language, ownName: region.name, id: id),
                names: region.names,
                cities: region.cities ?? [], released: region.released, center: region.center, bbox: region.bbox, state: row.state,
                mapVersion: snapshot.installedRegions(language: nil).first { $0.id == id }?.mapVersion ?? snapshot.mapVersion ?? MapVersion(""),
                downloadSizeInBytes: 0, sizeOnDiskInBytes: manifest.installedSizeOnDisk(of: id),
                catalog: snapshot.regionCatalogs[id] ?? catalogs.first?.catalog.id)
        }
    }

    /// The published snapshot of a committed store: `notInstalled` when nothing is installed,
    /// `repairNeeded` when an operation is pending.
    func committedSnapshot() throws(MapStoreError) -> StoreSnapshot {
        let snapshot = snapshot
        guard snapshot.imageID != nil else { throw MapStoreError.notInstalled }
        if snapshot.pending { throw MapStoreError.repairNeeded(status: .interruptedOperation) }
        return snapshot
    }

    /// What region details need from the device, read once per listing (not once per region).
    private struct DeviceView {
        /// Region states (installed ones and downloads under way).
        let states: [RegionID: RegionState]
        /// Bundles of the installed regions: the kept catalog is of the installed version, so an
        /// installed region's bundles are the catalog's.
        let onDevice: Set<BundleDigest>
        /// The store's block size, for sizes on disk.
        let blockSize: Int64
        /// The image's language, which names fall back to (`RegionName`).
        let imageLanguage: String?

        init(_ snapshot: StoreSnapshot, trees: [RegionTree], listings: ListingCache) throws {
            states = snapshot.states
            // Each catalog's copy is of the version the device holds of it, so an installed region's bundles are those it lists.
            onDevice = Set(snapshot.regions.flatMap { row in trees.lazy.compactMap { $0.region(row.id) }.first?.bundles ?? [] })
            blockSize = try listings.manifestFacts(snapshot).blockSize
            imageLanguage = snapshot.language
        }
    }

    private func details(_ id: RegionID, tree: RegionTree, catalog: CatalogID, device: DeviceView, language: String?) throws -> RegionDetails {
        guard let region = tree.region(id) else { throw MapStoreError.unknownCatalogRegion(id) }
        let bundles = tree.subtreeBundles(id)
        return RegionDetails(
            id: id, parent: region.parent, children: tree.children(of: id),
            name: RegionName.pick(names: region.names, language: language, imageLanguage: device.imageLanguage, id: id), names: region.names,
            cities: region.cities ?? [], released: region.released, center: region.center, bbox: region.bbox,
            state: device.states[id] ?? .available, mapVersion: tree.catalog.mapVersion,
            downloadSizeInBytes: tree.downloadSize(bundles.subtracting(device.onDevice)),
            sizeOnDiskInBytes: tree.installedSizeOnDisk(bundles, blockSize: device.blockSize), catalog: catalog)
    }

    /// Exact space downloading `regions` needs: bytes to fetch (minus what is already fetched),
    /// bytes the extracted files allocate, archives kept until the commit, and the free space now.
    /// Needs the kept catalog (see `setCatalogURL`). Never waits for a write in progress.
    public func spaceNeeded(for regions: [RegionID]) throws(MapStoreError) -> SpaceEstimate {
        try MapStoreError.boundary("spaceNeeded", path: storageFolder) {
            let snapshot = try committedSnapshot()
            let catalogs = catalogsOf(snapshot)
            // The catalog offering the regions (the image's when none does, which then says which is unknown).
            let entry = catalogs.first { entry in regions.contains { entry.tree?.region($0) != nil } } ?? catalogs[0]
            guard let tree = entry.tree, let url = entry.catalog.url, let version = entry.catalog.mapVersion else {
                throw MapStoreError.noCatalogURL
            }
            let device = try DeviceView(snapshot, trees: catalogs.compactMap(\.tree), listings: listings)
            let plan = try StoreCore.planDownload(
                tree: tree, ids: regions, catalogURL: url, installedVersion: version, installed: Set(snapshot.regions.map(\.id)),
                onDevice: device.onDevice)
            var fetch: Int64 = 0
            var write: Int64 = 0
            var temporary: Int64 = 0
            for request in plan.requests {
                let have = StoreCore.downloadedBytes(request.digest, root: snapshot.root)
                fetch += max(0, request.size - have)
                temporary += have
                let info = tree.catalog.bundles[request.digest]
                write +=
                    info?.sizeOnDisk(blockSize: device.blockSize)
                    ?? SizeOnDisk.allocated(size: info?.unpackedSize ?? 0, blockSize: device.blockSize)
            }
            var folder = snapshot.root
            while !FileSystem.exists(folder), folder != "/" { folder = FileSystem.parent(folder) }
            let free = (try? FileSystem.freeBytes(at: folder)) ?? 0
            return SpaceEstimate(fetchBytes: fetch, writeBytes: write, temporaryBytes: temporary, freeBytes: free)
        }
    }

    /// True when downloading `regions` may not fit: `spaceNeeded(for:)`'s peak exceeds the free space
    /// (also true when the space cannot be computed).
    public func mayBeOutOfSpace(for regions: [RegionID]) -> Bool {
        (try? spaceNeeded(for: regions).mayBeOutOfSpace) ?? true
    }
}
