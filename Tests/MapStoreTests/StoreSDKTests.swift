import Foundation
import MapFormat
import MapIO
import MapStore
import Synchronization
import TestSupport
import Testing

/// Issue 18's reproduced problems: what an app hits when it puts MapStore behind its UI.
@Suite struct StoreSDKTests {
    /// A download of `europe/li` paused once bytes arrived, with what its events said so far.
    final class PausedDownload: Sendable {
        let task: DownloadTask
        let events = Mutex<[DownloadEvent]>([])
        let watcher: Mutex<Task<Void, Never>?> = Mutex(nil)
        init(task: DownloadTask) { self.task = task }
    }

    /// A store installed from the fixture image whose catalog, `name` on `server`, serves `europe/li`
    /// trickling at 300 bytes/s (its first request only); the catalog's URL beside it.
    static func tricklingStore(_ device: Device, server: FaultServer, name: String) async throws -> (MapStore, URL) {
        let catalog = server.url(try DownloadTests.faultCatalog(name, regions: ["europe/li"], query: "?fault=trickle&rate=300&times=1"))
        return (try await device.open(catalog: catalog), catalog)
    }

    /// Starts a download of `europe/li` that trickles (first request only) and pauses it once bytes arrived.
    static func pausedDownload(_ store: MapStore, storage: String) async throws -> PausedDownload {
        let task = try store.download(regions: ["europe/li"])
        let paused = PausedDownload(task: task)
        let watcher = Task { for await event in task.events { paused.events.withLock { $0.append(event) } } }
        paused.watcher.withLock { $0 = watcher }
        #expect(await eventually(300) { partialBytes(storage) > 0 })
        task.pause()
        #expect(
            await eventually(300) {
                paused.events.withLock { $0.contains { if case .stateChanged(_, .paused) = $0 { true } else { false } } }
            })
        return paused
    }

    // MARK: moveData carries everything the store owns

    @Test func moveDataCarriesTheCatalogAndPausedDownloadsAndMovesBack() async throws {
        _ = try await offPool { StoreFixture.shared }
        let server = try FaultServer(root: DownloadTests.catalogFolder)
        defer { server.stop() }
        let device = Device()
        let (store, catalog) = try await StoreSDKTests.tricklingStore(device, server: server, name: "trickle-move.json")
        try await store.setCatalogURL(catalog)
        let task = try await StoreSDKTests.pausedDownload(store, storage: device.storage).task
        let available = try store.availableRegions()
        #expect(available.first { $0.id == "europe/li" }?.state == .paused)
        let fetched = partialBytes(device.storage)

        let moved = device.folder.join("moved")
        try await store.moveData(to: URL(fileURLWithPath: moved))
        #expect(try store.availableRegions() == available)
        #expect(partialBytes(moved) == fetched)
        let left = try DirectoryWalker.entries(of: device.storage)
        #expect(left.isEmpty, "\(left)")

        try await store.moveData(to: URL(fileURLWithPath: device.storage))
        #expect(store.storage.path == device.storageFolder)
        #expect(try store.availableRegions() == available)
        #expect(partialBytes(device.storage) == fetched)
        task.resume()
        try await task.wait()
        #expect(try store.regions().contains { $0.id == "europe/li" && $0.state == .completed })
        #expect(try await store.verify(full: true).isEmpty)
    }

    @Test func moveDataWaitsForNoFetchAndSaysSo() async throws {
        _ = try await offPool { StoreFixture.shared }
        let server = try FaultServer(root: DownloadTests.catalogFolder)
        defer { server.stop() }
        let device = Device()
        let (store, _) = try await StoreSDKTests.tricklingStore(device, server: server, name: "trickle-busy.json")
        let task = try store.download(regions: ["europe/li"])
        #expect(await eventually(300) { partialBytes(device.storage) > 0 })
        // The fetcher writes into downloads/: moving it away under the fetcher would lose or tear its bytes.
        let failure: (any Error)?
        do {
            try await store.moveData(to: URL(fileURLWithPath: device.folder.join("moved")))
            failure = nil
        } catch { failure = error }
        if case .busy(let operation, let reason)? = failure as? MapStoreError {
            #expect(operation == "moveData" && reason.contains("pause"), "\(reason)")
        } else {
            Issue.record("moveData during a download: \(String(describing: failure))")
        }
        #expect(!FileSystem.exists(device.folder.join("moved/store")))
        task.cancel()
        _ = try? await task.wait()
        try await store.moveData(to: URL(fileURLWithPath: device.folder.join("moved")))
        #expect(try await store.verify(full: true).isEmpty)
    }

    @Test func switchStorageIsRefusedWhileADownloadIsLive() async throws {
        _ = try await offPool { StoreFixture.shared }
        let server = try FaultServer(root: DownloadTests.catalogFolder)
        defer { server.stop() }
        let device = Device()
        let (store, _) = try await StoreSDKTests.tricklingStore(device, server: server, name: "trickle-switch.json")
        let other = URL(fileURLWithPath: device.folder.join("other"), isDirectory: true)
        // Fetching, then paused: either way the task works on this storage's files and rows.
        let task = try store.download(regions: ["europe/li"])
        #expect(await eventually(300) { partialBytes(device.storage) > 0 })
        for phase in ["fetching", "paused"] {
            if phase == "paused" {
                task.pause()
                #expect(await eventually(180) { task.isPaused })
            }
            let failure: (any Error)?
            do {
                try await store.switchStorage(to: other)
                failure = nil
            } catch { failure = error }
            if case .busy(let operation, let reason)? = failure as? MapStoreError {
                #expect(operation == "switchStorage" && reason.contains("download"), "\(reason)")
            } else {
                Issue.record("switchStorage with a \(phase) download: \(String(describing: failure))")
            }
            #expect(store.storage.path == device.storageFolder)
            #expect(!FileSystem.exists(other.path))
        }
        task.resume()
        try await task.wait()
        #expect(try await store.switchStorage(to: other) == .empty)
        #expect(try await store.switchStorage(to: URL(fileURLWithPath: device.storage)) == .ok)
        #expect(try store.regions().contains { $0.id == "europe/li" && $0.state == .completed })
    }

    @Test func droppedStoreAndPausedDownloadAreFreedAndTheDownloadResumesAfterReopening() async throws {
        _ = try await offPool { StoreFixture.shared }
        let server = try FaultServer(root: DownloadTests.catalogFolder)
        defer { server.stop() }
        let device = Device()
        weak var droppedStore: MapStore?
        weak var droppedTask: DownloadTask?
        let catalog: URL
        do {
            let (store, url) = try await StoreSDKTests.tricklingStore(device, server: server, name: "trickle-drop.json")
            catalog = url
            let paused = try await StoreSDKTests.pausedDownload(store, storage: device.storage)
            paused.watcher.withLock { $0 }?.cancel()
            droppedStore = store
            droppedTask = paused.task
        }
        let freed = await eventually(300) { droppedStore == nil && droppedTask == nil }
        #expect(freed, "store freed: \(droppedStore == nil), paused download freed: \(droppedTask == nil)")
        let fetched = partialBytes(device.storage)
        #expect(fetched > 0)

        let store = try await device.open(catalog: catalog)
        #expect(try store.availableRegions().first { $0.id == "europe/li" }?.state == .paused)
        try await store.download(regions: ["europe/li"]).wait()
        #expect(try store.regions().contains { $0.id == "europe/li" && $0.state == .completed })
    }

    // MARK: a download awaited in a task, cancelled with it

    @Test func awaitedDownloadStopsWithItsTaskKeepsItsBytesAndALaterOneResumes() async throws {
        _ = try await offPool { StoreFixture.shared }
        let server = try FaultServer(root: DownloadTests.catalogFolder)
        defer { server.stop() }
        let device = Device()
        let (store, _) = try await StoreSDKTests.tricklingStore(device, server: server, name: "trickle-await.json")
        let reported = Mutex<[RegionProgress]>([])
        let downloading = Task {
            try await store.download(regions: ["europe/li"]) { region, progress in
                if region == "europe/li" { reported.withLock { $0.append(progress) } }
            }
        }
        #expect(await eventually(300) { partialBytes(device.storage) > 0 && !reported.withLock { $0.isEmpty } })
        downloading.cancel()
        let outcome = await downloading.result
        #expect(cancelled(outcome), "\(outcome)")
        let fetched = partialBytes(device.storage)
        #expect(fetched > 0)
        #expect(try store.availableRegions().first { $0.id == "europe/li" }?.state == .paused)

        try await store.download(regions: ["europe/li"]) { _, _ in }
        #expect(try store.regions().contains { $0.id == "europe/li" && $0.state == .completed })
        let li = try DownloadTests.bundle(of: "europe/li")
        let sent = try server.served(li.path).bytes
        // The second download continued from the kept bytes (at most one unflushed block travels twice).
        #expect(sent - Int(li.size) <= 64 * 1024, "sent \(sent) for \(li.size)")
        let seen = reported.withLock { $0 }
        #expect(seen.allSatisfy { $0.receivedBytes <= $0.totalBytes && $0.totalBytes > 0 }, "\(seen)")
    }

    // MARK: a paused task learns that another one installed its regions

    @Test func pausedTaskWaitReturnsWhenAnotherTaskCompletesTheRegion() async throws {
        _ = try await offPool { StoreFixture.shared }
        let server = try FaultServer(root: DownloadTests.catalogFolder)
        defer { server.stop() }
        let device = Device()
        let (store, catalog) = try await StoreSDKTests.tricklingStore(device, server: server, name: "trickle-twice.json")
        try await store.setCatalogURL(catalog)
        let paused = try await StoreSDKTests.pausedDownload(store, storage: device.storage)
        try await store.download(regions: ["europe/li"]).wait()
        #expect(try store.regions().contains { $0.id == "europe/li" && $0.state == .completed })
        let task = paused.task
        // A waiter that never returns must fail the test, not hang the suite: it waits in a task of its own.
        let waited = Mutex(false)
        Task {
            try? await task.wait()
            waited.withLock { $0 = true }
        }
        let returned = await eventually(180) { waited.withLock { $0 } }
        #expect(returned, "the paused task's wait() did not return after another task installed its region")
        guard returned else { return }
        await paused.watcher.withLock { $0 }?.value
        let last = paused.events.withLock { $0.last }
        if case .completed(let ids)? = last { #expect(ids == ["europe/li"]) } else { Issue.record("last event \(String(describing: last))") }
    }

    // MARK: repair after a download or an update

    @Test func repairAfterADownloadRestoresImageFilesFromTheImageAndDownloadedOnesByDigest() async throws {
        _ = try await offPool { StoreFixture.shared }
        let nginx = try NginxServer(root: DownloadTests.catalogFolder)
        defer { nginx.stop() }
        let device = Device()
        let catalog = URL(string: "catalog.json", relativeTo: nginx.baseURL)!.absoluteURL
        var options = MapStore.Options()
        options.catalogURL = catalog
        let image = StoreFixture.shared.image(archive: false)
        let store = try await MapStore.open(
            storage: URL(fileURLWithPath: device.storage), cache: URL(fileURLWithPath: device.cache), preinstalled: image, options: options)
        try await store.setCatalogURL(catalog)
        try await store.download(regions: ["europe/li"]).wait()

        let shipped = try #require(try StoreFixture.shared.manifest().files.first)
        let li = try DownloadTests.bundle(of: "europe/li")
        let manifest = try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: device.storage + "/manifest.json")), file: "manifest.json")
        let downloaded = try #require(manifest.files.first { $0.bundle == li.digest })
        try flipBit(in: device.storage + "/store/" + shipped.path.string)
        try FileManager.default.removeItem(atPath: device.storage + "/store/" + downloaded.path.string)
        #expect(try await store.verify(full: true).count == 2)

        let reopened = try await MapStore.open(
            storage: URL(fileURLWithPath: device.storage), cache: URL(fileURLWithPath: device.cache), preinstalled: image, options: options)
        let report = try await reopened.repair()
        #expect(report.actions.contains(.restoredFiles(count: 1, from: .image)), "\(report.actions)")
        #expect(report.actions.contains(.restoredFiles(count: 1, from: .network)), "\(report.actions)")
        #expect(try await reopened.verify(full: true).isEmpty)

        // A verified archive in the storage's download cache (a paused or failed download left it) serves without the network.
        try FileManager.default.removeItem(atPath: device.storage + "/store/" + downloaded.path.string)
        let cached = device.storage + "/downloads/sha256/" + li.digest.hex.prefix(2) + "/" + li.digest.hex
        try FileManager.default.createDirectory(atPath: FileSystem.parent(cached), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: DownloadTests.catalogFolder + li.path, toPath: cached)
        let requests = nginx.requests(path: li.path)
        let again = try await reopened.repair()
        #expect(again.actions == [.restoredFiles(count: 1, from: .downloadCache)], "\(again.actions)")
        #expect(nginx.requests(path: li.path) == requests)
        #expect(try await reopened.verify(full: true).isEmpty)
    }

    @Test func repairAfterAnUpdateRestoresUnchangedFilesFromTheShippedImage() async throws {
        let fixture = try await UpdateFixture.ready()
        let device = Device()
        let store = try await device.open(image: fixture.image)
        try await store.update(catalog: fixture.catalogURL(UpdateFixture.newVersion))
        #expect(store.mapVersion == UpdateFixture.newVersion)
        let changed = Set(try fixture.changedBundles().keys)
        let manifest = try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: device.storage + "/manifest.json")), file: "manifest.json")
        let unchanged = try #require(manifest.files.first { !changed.contains($0.bundle) })
        let updated = try #require(manifest.files.first { changed.contains($0.bundle) })
        try flipBit(in: device.storage + "/store/" + unchanged.path.string)
        try FileManager.default.removeItem(atPath: device.storage + "/store/" + updated.path.string)

        let report = try await device.open(image: fixture.image).repair()
        #expect(report.actions.contains(.restoredFiles(count: 1, from: .image)), "\(report.actions)")
        #expect(report.actions.contains(.restoredFiles(count: 1, from: .network)), "\(report.actions)")
        #expect(try await store.verify(full: true).isEmpty)
    }

    // MARK: regions to download right after the first start, also while an update is pending

    @Test func regionsAreOfferedAfterInstallAndDownloadableWhileAnUpdateIsPending() async throws {
        _ = try await offPool { StoreFixture.shared }
        let site = TemporaryFolder("sdk-site")
        try FileManager.default.copyItem(atPath: DownloadTests.catalogFolder, toPath: site.join("cat"))
        let nginx = try NginxServer(root: site.join("cat"))
        defer { nginx.stop() }
        let device = Device()
        let catalog = URL(string: "catalog.json", relativeTo: nginx.baseURL)!.absoluteURL
        let store = try await device.open(catalog: catalog)
        #expect(try store.availableRegions().map(\.id) == ["europe", "europe/li", "world"])

        // The server moves on to a newer map version (same bundles): the installed version's regions stay downloadable.
        var newer = try DownloadTests.catalog()
        newer.mapVersion = MapVersion(newer.mapVersion.rawValue + ".1")
        try CanonicalJSON.encode(newer).write(to: URL(fileURLWithPath: site.join("cat/catalog.json")))
        #expect(try await store.checkForUpdate().status == .oldData)
        try await store.download(regions: ["europe/li"]).wait()
        #expect(try store.regions().contains { $0.id == "europe/li" && $0.state == .completed })
        #expect(try await store.verify(full: true).isEmpty)
    }

    // MARK: readers never wait for a writer

    @Test func readersAnswerWhileAnUpdateIsHeldMidway() async throws {
        let fixture = try await UpdateFixture.ready()
        let device = Device()
        var options = MapStore.Options()
        options.catalogURL = fixture.catalogURL(UpdateFixture.oldVersion)
        let store = try await MapStore.open(storage: device.storageURL, cache: device.cacheURL, preinstalled: fixture.image, options: options)
        let listed = try store.availableRegions().map(\.id)
        let installedID = try #require(try store.regions().first?.id)
        let installedDetails = try store.regionDetails(installedID)
        let report = store.versionReport
        let space = try store.spaceNeeded(for: listed)
        let shipped = try #require(
            try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: fixture.imageFolder + "/manifest.json")), file: "manifest.json").files
                .first)
        let root = device.storageFolder
        let reached = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        CrashPoint.pauseHook.withLock {
            $0 = { name, storage in
                guard storage == root, name == "update.midStaging" else { return }
                reached.signal()
                release.wait()
            }
        }
        defer { CrashPoint.pauseHook.withLock { $0 = nil } }
        let update = Task { try await store.update(catalog: fixture.catalogURL(UpdateFixture.newVersion)) }
        let held = try await offPool { reached.wait(timeout: .now() + 600) == .success }
        try #require(held, "the update never reached update.midStaging")

        // The update holds still inside its transition; readers on a thread of their own must answer
        // before it is released (a reader stuck behind it is given 30 s, then the update goes on).
        let answered = DispatchSemaphore(value: 0)
        let answers = Mutex<(path: String?, regions: Int, version: MapVersion?)?>(nil)
        let listings = Mutex<(available: [RegionID]?, details: RegionDetails?, state: RegionState?, catalog: URL?, report: String)?>(nil)
        let spaceSeen = Mutex<SpaceEstimate?>(nil)
        Thread {
            let path = (try? store.path(of: shipped.path))??.path
            let regions = (try? store.regions().count) ?? -1
            let version = store.mapVersion
            // The map cache is the hottest reader of all: it has a lock of its own.
            _ = try? store.cachedData(for: "tiles/1/2/3")
            _ = try? store.computeCacheSize()
            answers.withLock { $0 = (path, regions, version) }
            // A region list screen: the catalog's regions, one region's details, the catalog, the log line.
            let available = try? store.availableRegions().map(\.id)
            let details = try? store.regionDetails(installedID)
            let state = try? store.regions().first { $0.id == installedID }?.state
            listings.withLock { $0 = (available, details, state, store.catalogURL, store.versionReport) }
            spaceSeen.withLock { $0 = try? store.spaceNeeded(for: listed) }
            answered.signal()
        }.start()
        let inTime = try await offPool { answered.wait(timeout: .now() + 30) == .success }
        release.signal()
        try await update.value
        #expect(inTime, "a reader waited for the update")
        let seen = answers.withLock { $0 }
        #expect(seen?.path == root + "/store/" + shipped.path.string)
        #expect(seen?.regions == fixture.manifestRegionCount)
        #expect(seen?.version == UpdateFixture.oldVersion)
        let listing = listings.withLock { $0 }
        #expect(listing?.available == listed)
        // The same details but the state, which is the update's own (the region list's) while it runs.
        #expect(listing?.details?.state == listing?.state)
        #expect(listing?.details?.children == installedDetails.children)
        #expect(listing?.details?.names == installedDetails.names)
        #expect(listing?.details?.sizeOnDiskInBytes == installedDetails.sizeOnDiskInBytes)
        #expect(listing?.details?.mapVersion == UpdateFixture.oldVersion)
        #expect(listing?.catalog == fixture.catalogURL(UpdateFixture.oldVersion))
        #expect(listing?.report == report)
        let seenSpace = spaceSeen.withLock { $0 }
        #expect(seenSpace?.fetchBytes == space.fetchBytes && seenSpace?.writeBytes == space.writeBytes, "\(String(describing: seenSpace)) \(space)")
        #expect(space.fetchBytes > 0)
        #expect(store.mapVersion == UpdateFixture.newVersion)
        #expect(try await store.verify(full: true).isEmpty)
    }

    @Test func startingADownloadOrAnUpdateDoesNotWaitForAMoveInProgress() async throws {
        _ = try await offPool { StoreFixture.shared }
        let nginx = try NginxServer(root: DownloadTests.catalogFolder)
        defer { nginx.stop() }
        let device = Device()
        let catalog = URL(string: "catalog.json", relativeTo: nginx.baseURL)!.absoluteURL
        let store = try await device.open(catalog: catalog)
        let root = device.storageFolder
        let reached = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        CrashPoint.storageHooks.withLock {
            $0[root] = { name in
                guard name == "move.midCopy" else { return }
                reached.signal()
                release.wait()
            }
        }
        defer { CrashPoint.storageHooks.withLock { $0[root] = nil } }
        let moved = URL(fileURLWithPath: device.folder.join("moved"), isDirectory: true)
        let moving = Task { try await store.moveData(to: moved) }
        let held = try await offPool { reached.wait(timeout: .now() + 600) == .success }
        try #require(held, "the move never reached move.midCopy")

        // A button tap starts a download and an update while the move copies: the calls return their
        // tasks at once (on a thread of their own; one stuck behind the move is given 30 s).
        let started = DispatchSemaphore(value: 0)
        let tasks = Mutex<(download: DownloadTask?, update: UpdateTask?)>((nil, nil))
        Thread {
            let download = try? store.download(regions: ["europe/li"])
            let update = try? store.startUpdate(catalog: catalog)
            tasks.withLock { $0 = (download, update) }
            started.signal()
        }.start()
        let inTime = try await offPool { started.wait(timeout: .now() + 30) == .success }
        release.signal()
        try await moving.value
        #expect(inTime, "starting a download or an update waited for the move")
        let (download, update) = tasks.withLock { $0 }
        // They run once the move committed, at the new place.
        try await #require(download).wait()
        try await #require(update).wait()
        #expect(store.storage.path == moved.standardizedFileURL.path)
        #expect(try store.regions().contains { $0.id == "europe/li" && $0.state == .completed })
        #expect(try await store.verify(full: true).isEmpty)
    }

    // MARK: typed errors at the boundary

    @Test func failuresBelowArriveAsMapStoreErrorsThatSayWhatToDo() async throws {
        let device = Device()
        let store = try await device.open(image: StoreFixture.shared.image(archive: false))
        let blocker = device.folder.join("blocker")
        try Data("x".utf8).write(to: URL(fileURLWithPath: blocker))
        // A folder below a plain file cannot be made: the file system's failure must arrive as a MapStoreError.
        let failure: (any Error)?
        do {
            try await store.switchStorage(to: URL(fileURLWithPath: blocker + "/storage"))
            failure = nil
        } catch { failure = error }
        let error = try #require(failure as? MapStoreError, "\(String(describing: failure))")
        #expect(error.category == .local)
        #expect(error.errorDescription?.contains(folderPath(blocker)) == true, "\(error)")
        #expect(error.errorDescription?.contains("free space or fix access") == true, "\(error)")
        #expect(store.storage.path == device.storageFolder)
        #expect(try await store.verify(full: false).isEmpty)
    }

    @Test func refusalsByPolicySayWhatToDo() async throws {
        _ = try await offPool { StoreFixture.shared }
        let device = Device()
        var options = MapStore.Options()
        options.networkPolicy = NetworkPolicy(allowMetered: false)
        options.networkIsMetered = true
        let store = try await device.open(catalog: URL(fileURLWithPath: DownloadTests.catalogFolder + "/catalog.json"), options: options)
        let failure: MapStoreError?
        do {
            _ = try store.download(regions: ["europe/li"])
            failure = nil
        } catch { failure = error }
        guard case .meteredNetworkDisallowed(let regions)? = failure else {
            Issue.record("a download on a metered network: \(String(describing: failure))")
            return
        }
        #expect(regions == ["europe/li"])
        let message = try #require(failure?.errorDescription)
        #expect(message.contains("networkChanged(metered: false)") && message.contains("allowMetered"), "\(message)")

        let rollback = MapStoreError.rollbackRefused(installed: MapVersion("2026.12.0"), offered: MapVersion("2026.11.0"))
        let said = try #require(rollback.errorDescription)
        #expect(said.contains("2026.12.0 or newer") && said.contains("catalog URL"), "\(said)")
    }

    @Test func aDatabaseFailureInsideADownloadArrivesAsALocalErrorWithItsPath() async throws {
        _ = try await offPool { StoreFixture.shared }
        let device = Device()
        let store = try await device.open(catalog: URL(fileURLWithPath: DownloadTests.catalogFolder + "/catalog.json"))
        // Another connection holds the state database's write lock: the download's first write fails
        // (SQLITE_BUSY after the 5 s busy timeout) inside the task, after the call returned.
        let other = try SQLiteDatabase(path: device.storage + "/state.sqlite")
        try other.execute("BEGIN IMMEDIATE")
        let task = try store.download(regions: ["europe/li"])
        let failure: MapStoreError?
        do {
            try await task.wait()
            failure = nil
        } catch { failure = error }
        try other.execute("ROLLBACK")
        guard case .local(let path, _, _, _, let reason)? = failure else {
            Issue.record("a locked state database during a download: \(String(describing: failure))")
            return
        }
        #expect(path.hasSuffix("/state.sqlite"), "\(path)")
        #expect(reason.contains("locked"), "\(reason)")
        #expect(failure?.errorDescription?.contains("free space or fix access") == true)
    }

    // MARK: one store-wide event stream, several consumers; progress by polling

    @Test func everyConsumerOfTheStoreEventsSeesADownloadAndProgressCanBePolled() async throws {
        _ = try await offPool { StoreFixture.shared }
        let server = try FaultServer(root: DownloadTests.catalogFolder)
        defer { server.stop() }
        let device = Device()
        let (store, _) = try await StoreSDKTests.tricklingStore(device, server: server, name: "trickle-events.json")
        let consumers = (0..<2).map { _ in
            let events = store.events()
            return Task { () -> [StoreEvent] in
                var seen: [StoreEvent] = []
                for await event in events {
                    seen.append(event)
                    if case .downloadFinished = event { break }
                }
                return seen
            }
        }
        let paused = try await StoreSDKTests.pausedDownload(store, storage: device.storage)
        let polled = try #require(store.progress(of: "europe/li"))
        #expect(polled.receivedBytes > 0 && polled.receivedBytes < polled.totalBytes)
        paused.task.resume()
        try await paused.task.wait()
        #expect(store.progress(of: "europe/li") == nil)
        for consumer in consumers {
            let seen = await consumer.value
            let states = seen.compactMap { event -> RegionState? in
                if case .regionStateChanged("europe/li", let state) = event { state } else { nil }
            }
            #expect(states == [.downloading, .paused, .downloading, .completed], "\(seen)")
            #expect(seen.contains { if case .progress("europe/li", let got, let total) = event(of: $0) { got > 0 && got <= total } else { false } })
            if case .downloadFinished(let ids)? = seen.last { #expect(ids == ["europe/li"]) } else { Issue.record("\(seen)") }
        }
    }
}

/// `event` itself (lets a pattern in a closure name the enum's cases).
private func event(of event: StoreEvent) -> StoreEvent { event }
