import Foundation
import MapFormat
import MapIO
import MapStore
import MapVerify
import Synchronization
import TestSupport
import Testing

/// Issue 18 part A: long work is async and stops when its task is cancelled, leaving a consistent
/// store a later call completes; updates pause and resume; paths are URLs.
@Suite struct AsyncAPITests {
    /// Holds the work on `storage` at the crash point `point` while the test cancels `task`, then lets it go on.
    static func cancel<T: Sendable>(_ task: @escaping @Sendable () async throws -> T, at point: String, storage: String) async throws -> Result<
        T, any Error
    > {
        let root = folderPath(storage)
        let reached = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        CrashPoint.storageHooks.withLock {
            $0[root] = { name in
                guard name == point else { return }
                reached.signal()
                release.wait()
            }
        }
        defer { CrashPoint.storageHooks.withLock { $0[root] = nil } }
        let running = Task { try await task() }
        let held = try await offPool { reached.wait(timeout: .now() + 600) == .success }
        running.cancel()
        release.signal()
        try #require(held, "the work never reached \(point)")
        return await running.result
    }

    // MARK: cancellation through Swift task cancellation

    @Test(arguments: [false, true])
    func cancelledOpenLeavesAnEmptyStorageAndALaterOpenInstalls(archive: Bool) async throws {
        _ = try await offPool { StoreFixture.shared }
        let device = Device()
        let image = StoreFixture.shared.image(archive: archive)
        let outcome = try await AsyncAPITests.cancel({ try await device.open(image: image) }, at: "install.midStaging", storage: device.storage)
        #expect(cancelled(outcome), "\(outcome)")
        #expect(try DirectoryWalker.entries(of: device.storage).isEmpty)
        #expect(try await device.open().initialStatus == .empty)

        let store = try await device.open(image: image)
        #expect(store.initialStatus == .ok)
        #expect(try store.regions().map(\.id) == StoreFixture.allRegions)
        #expect(try await store.verify(full: true).isEmpty)
    }

    @Test func openInACancelledTaskSaysCancelledAndInstallsNothing() async throws {
        _ = try await offPool { StoreFixture.shared }
        let device = Device()
        let opening = Task { try await device.open(image: StoreFixture.shared.image(archive: false)) }
        opening.cancel()
        let outcome = await opening.result
        #expect(cancelled(outcome), "\(outcome)")
        #expect(try await device.open().initialStatus == .empty)
    }

    @Test func cancelledRepairLeavesACommittedStoreAndALaterRepairFinishes() async throws {
        _ = try await offPool { StoreFixture.shared }
        let device = Device()
        let image = StoreFixture.shared.image(archive: false)
        _ = try await device.open(image: image)
        let files = try StoreFixture.shared.manifest().files.filter { $0.size > 64 }.prefix(2)
        for file in files { try flipBit(in: device.storage + "/store/" + file.path.string) }
        let store = try await device.open(image: image, full: true)
        #expect(store.initialStatus == .corrupted)

        let outcome = try await AsyncAPITests.cancel({ try await store.repair() }, at: "repair.afterVerify", storage: device.storage)
        #expect(cancelled(outcome), "\(outcome)")
        let checked = try await MapStore.verifyInstalled(storage: device.storageURL, full: true)
        #expect(!checked.problems.contains { $0.kind == .pendingOperation })
        #expect(checked.problems.count == files.count, "\(checked.problems)")

        let report = try await store.repair()
        #expect(report.actions == [.restoredFiles(count: files.count, from: .image)], "\(report.actions)")
        #expect(try await store.verify(full: true).isEmpty)
    }

    @Test func cancelledMoveLeavesTheStoreWhereItWasAndALaterMoveCompletes() async throws {
        _ = try await offPool { StoreFixture.shared }
        let device = Device()
        let store = try await device.open(image: StoreFixture.shared.image(archive: false))
        let target = URL(fileURLWithPath: device.folder.join("moved"), isDirectory: true)
        let events = store.events()
        let outcome = try await AsyncAPITests.cancel({ try await store.moveData(to: target) }, at: "move.midCopy", storage: device.storage)
        #expect(cancelled(outcome), "\(outcome)")
        #expect(store.storage.path == device.storageFolder)
        #expect(!FileSystem.exists(target.path))
        #expect(try await device.open().initialStatus == .ok)
        #expect(try await store.verify(full: true).isEmpty)

        let seen = Task { () -> [StoreEvent] in
            var seen: [StoreEvent] = []
            for await event in events {
                seen.append(event)
                if case .storageMoved = event { break }
            }
            return seen
        }
        try await store.moveData(to: target)
        #expect(store.storage.path == target.standardizedFileURL.path)
        #expect(try await store.verify(full: true).isEmpty)
        #expect(try DirectoryWalker.entries(of: device.storage).isEmpty)
        let fractions = await seen.value.compactMap { event -> Double? in if case .moveProgress(let fraction) = event { fraction } else { nil } }
        #expect(fractions.last == 1 && fractions == fractions.sorted(), "\(fractions)")
    }

    @Test func deleteInACancelledTaskChangesNothing() async throws {
        _ = try await offPool { StoreFixture.shared }
        let device = Device()
        let store = try await device.open(image: StoreFixture.shared.image(archive: false))
        let deleting = Task {
            // Sleeps until cancelled, then deletes from the cancelled task.
            try? await Task.sleep(for: .seconds(60))
            try await store.deleteRegions(["europe/ch/zh"])
        }
        deleting.cancel()
        let outcome = await deleting.result
        #expect(cancelled(outcome), "\(outcome)")
        #expect(try store.regions().map(\.id) == StoreFixture.allRegions)
        try await store.deleteRegions(["europe/ch/zh"])
        #expect(try store.regions().map(\.id) == StoreFixture.allRegions.filter { $0 != "europe/ch/zh" })
        #expect(try await store.verify(full: true).isEmpty)
    }

    @Test func switchStorageInACancelledTaskChangesNothing() async throws {
        _ = try await offPool { StoreFixture.shared }
        let device = Device()
        let store = try await device.open(image: StoreFixture.shared.image(archive: false))
        let other = URL(fileURLWithPath: device.folder.join("other"), isDirectory: true)
        let switching = Task {
            // Sleeps until cancelled, then switches from the cancelled task.
            try? await Task.sleep(for: .seconds(60))
            return try await store.switchStorage(to: other)
        }
        switching.cancel()
        let outcome = await switching.result
        #expect(cancelled(outcome), "\(outcome)")
        #expect(store.storage.path == device.storageFolder)
        #expect(!FileSystem.exists(other.path))
        let log = AutoUpdateTests.EventLog(store.events())
        #expect(try await store.switchStorage(to: other) == .empty)
        #expect(store.storage.path == folderPath(other.path))
        #expect(try await store.switchStorage(to: device.storageURL) == .ok)
        #expect(try store.regions().map(\.id) == StoreFixture.allRegions)
        // Each switch is heard by consumers of events(), with the folder and its status (and, before it,
        // every region whose state the switch changed).
        let heardSwitches = {
            log.all.compactMap { event -> String? in
                if case .storageSwitched(let folder, let status) = event { "\(folderPath(folder.path)) \(status)" } else { nil }
            }
        }
        #expect(await eventually { heardSwitches().count >= 2 })
        let switches = heardSwitches()
        #expect(switches == ["\(folderPath(other.path)) empty", "\(device.storageFolder) ok"], "\(switches)")
    }

    @Test func deletedRegionsAreAnnouncedToEveryEventConsumer() async throws {
        _ = try await offPool { StoreFixture.shared }
        let device = Device()
        let store = try await device.open(image: StoreFixture.shared.image(archive: false))
        let consumers = (0..<2).map { _ in
            let events = store.events()
            return Task { () -> [String] in
                var changed: [String] = []
                for await case .regionStateChanged(let id, let state) in events {
                    changed.append("\(id) \(state)")
                    if changed.count == 2 { break }
                }
                return changed
            }
        }
        // A consumer that hears nothing is ended (an AsyncStream ends when its task is cancelled).
        let deadline = Task {
            try? await Task.sleep(for: .seconds(20))
            for consumer in consumers { consumer.cancel() }
        }
        defer { deadline.cancel() }
        // Deleting a region takes its installed descendants along: each one is announced.
        try await store.deleteRegions(["europe/ch/be"])
        for consumer in consumers {
            let changed = await consumer.value
            #expect(changed.sorted() == ["europe/ch/be available", "europe/ch/be/thun available"], "\(changed)")
        }
        #expect(try store.regions().map(\.id) == ["europe/ch", "europe/ch/zh"])
    }

    // MARK: verify is long work: async, cancellable, off the store's lock

    @Test func fullVerifyInACancelledTaskSaysCancelled() async throws {
        _ = try await offPool { StoreFixture.shared }
        let device = Device()
        let store = try await device.open(image: StoreFixture.shared.image(archive: false))
        let outcome = try await AsyncAPITests.cancel({ try await store.verify(full: true) }, at: "verify.beforeFiles", storage: device.storage)
        #expect(cancelled(outcome), "\(outcome)")
        let installed = try await AsyncAPITests.cancel(
            { try await MapStore.verifyInstalled(storage: device.storageURL, full: true) }, at: "verify.beforeFiles", storage: device.storage)
        #expect(cancelled(installed), "\(installed)")
        #expect(try await store.verify(full: true).isEmpty)
        #expect(try await MapStore.verifyInstalled(storage: device.storageURL, full: true).problems.isEmpty)
    }

    @Test func fileCheckStopsBetweenFilesWhenAsked() async throws {
        let fixture = try await offPool { StoreFixture.shared }
        let device = Device()
        _ = try await device.open(image: fixture.image(archive: false))
        let manifest = try fixture.manifest()
        try #require(manifest.files.count > 4)
        // Stops after two questions (the feeder and the hashing threads each ask before a file).
        let asked = Mutex(0)
        let stopped = ImageVerifier.verifyTree(
            device.storage + "/store", manifest: manifest, hashContents: true, jobs: 2,
            stop: {
                asked.withLock { count in
                    count += 1
                    return count > 2
                }
            })
        let whole = ImageVerifier.verifyTree(device.storage + "/store", manifest: manifest, hashContents: true, jobs: 2)
        #expect(whole.problems.isEmpty && whole.bytes == manifest.files.reduce(0) { $0 + $1.size })
        let largest = manifest.files.map(\.size).sorted().suffix(2).reduce(0, +)
        #expect(stopped.bytes <= largest, "hashed \(stopped.bytes) bytes after being asked to stop")
        #expect(stopped.files < manifest.files.count)
    }

    @Test func verifyHeldMidwayBlocksNoOtherCallAndReportsTheStateAfterAWriteMeanwhile() async throws {
        _ = try await offPool { StoreFixture.shared }
        let device = Device()
        let store = try await device.open(image: StoreFixture.shared.image(archive: false))
        let shipped = try #require(try StoreFixture.shared.manifest().files.first)
        let root = folderPath(device.storage)
        let reached = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let rounds = Mutex(0)
        CrashPoint.storageHooks.withLock {
            $0[root] = { name in
                guard name == "verify.beforeFiles" else { return }
                // Holds the first round only; later rounds run through.
                guard
                    rounds.withLock({ count in
                        count += 1
                        return count == 1
                    })
                else { return }
                reached.signal()
                release.wait()
            }
        }
        defer { CrashPoint.storageHooks.withLock { $0[root] = nil } }
        let verifying = Task { try await store.verify(full: true) }
        let held = try await offPool { reached.wait(timeout: .now() + 600) == .success }
        try #require(held, "the verify never reached verify.beforeFiles")

        // While the verify reads the files: readers and calls that take the store's lock answer, on a
        // thread of their own (one stuck behind the verify is given 30 s).
        let answered = DispatchSemaphore(value: 0)
        let answers = Mutex<(path: String?, regions: Int, report: String)?>(nil)
        Thread {
            let path = (try? store.path(of: shipped.path))??.path
            let regions = (try? store.regions().count) ?? -1
            _ = store.catalogURL
            _ = try? store.availableRegions()
            let report = store.versionReport
            answers.withLock { $0 = (path, regions, report) }
            answered.signal()
        }.start()
        let inTime = try await offPool { answered.wait(timeout: .now() + 30) == .success }
        // A write goes through too: the files the verify was about to read change under it.
        let deleting = Task { try await store.deleteRegions(["europe/ch/zh"]) }
        let deleted = await eventually(180) { (try? store.regions().contains { $0.id == "europe/ch/zh" }) == false }
        release.signal()
        try await deleting.value
        let problems = try await verifying.value
        #expect(inTime, "a call waited for the verify")
        #expect(answers.withLock { $0 }?.regions == StoreFixture.allRegions.count)
        #expect(deleted, "a deletion waited for the verify")
        // The verify reports the store as it is after the deletion, not a mix of before and after.
        #expect(problems.isEmpty, "\(problems)")
        #expect(rounds.withLock { $0 } >= 2)
    }

    // MARK: updates pause and resume; per-region progress

    @Test func pausedUpdateResumesWithoutRefetching() async throws {
        let fixture = try await UpdateFixture.ready()
        let device = Device()
        let server = try FaultServer(root: fixture.served)
        defer { server.stop() }
        // Every bundle trickles on its first request only (each taking about 6 s), so the update is paused mid-fetch.
        let changed = try fixture.changedBundles()
        let url = try fixture.tricklingCatalog("trickle-pause.json", on: server)
        let store = try await device.open(image: fixture.image)
        let total = changed.values.reduce(Int64(0)) { $0 + $1.size }
        let task = try store.startUpdate(catalog: url)
        #expect(await eventually(300) { partialBytes(device.storage) > total / 10 })
        task.pause()
        #expect(await eventually(180) { task.isPaused })
        #expect(try store.regions().contains { $0.state == .paused })
        let updating = try #require(try store.regions().first { $0.state == .paused && store.progress(of: $0.id) != nil }?.id)
        let held = try #require(store.progress(of: updating))
        #expect(held.receivedBytes <= held.totalBytes && held.totalBytes > 0)
        #expect(store.mapVersion == UpdateFixture.oldVersion)
        let kept = partialBytes(device.storage)
        #expect(kept > 0)
        // Paused: nothing is fetching, so a reader or another call is not refused as busy.
        #expect(try await store.verify(full: false).isEmpty)

        // One update at a time: another catalog is refused while this one is live; the same one is this update.
        let other = fixture.catalogURL(UpdateFixture.newVersion)
        let second = Result { () throws(MapStoreError) -> UpdateTask in try store.startUpdate(catalog: other) }
        if case .failure(.busy(let operation, _)) = second {
            #expect(operation == "update")
        } else {
            Issue.record("a second update beside a paused one: \(second)")
        }
        task.resume()
        #expect(try store.startUpdate(catalog: url) === task)
        try await task.wait()
        #expect(store.mapVersion == UpdateFixture.newVersion)
        #expect(try store.regions().allSatisfy { $0.state == .completed })
        #expect(store.progress(of: updating) == nil)
        let stats = try server.stats()
        let sent = changed.values.reduce(0) { $0 + (stats["/cat-\(UpdateFixture.newVersion)/" + $1.url]?.bytes ?? 0) }
        // At most one partial block per bundle (the last, unflushed write before the pause) travels twice.
        #expect(sent - Int(total) <= changed.count * 64 * 1024, "sent \(sent) for \(total)")
        #expect(try await store.verify(full: true).isEmpty)
    }

    @Test func droppedStoreAndPausedUpdateAreFreedAndTheUpdateResumesAfterReopening() async throws {
        let fixture = try await UpdateFixture.ready()
        let device = Device()
        let server = try FaultServer(root: fixture.served)
        defer { server.stop() }
        let changed = try fixture.changedBundles()
        let total = changed.values.reduce(Int64(0)) { $0 + $1.size }
        let url = try fixture.tricklingCatalog("trickle-drop.json", on: server)
        weak var droppedStore: MapStore?
        weak var droppedTask: UpdateTask?
        do {
            let store = try await device.open(image: fixture.image)
            let task = try store.startUpdate(catalog: url)
            #expect(await eventually(300) { partialBytes(device.storage) > total / 10 })
            task.pause()
            #expect(await eventually(180) { task.isPaused })
            droppedStore = store
            droppedTask = task
        }
        // The app let go of both: nothing else may keep them (or the store's open database) alive.
        let freed = await eventually(300) { droppedStore == nil && droppedTask == nil }
        #expect(freed, "store freed: \(droppedStore == nil), paused update freed: \(droppedTask == nil)")

        let kept = partialBytes(device.storage)
        #expect(kept > 0)
        let store = try await device.open(image: fixture.image)
        #expect(store.initialStatus == .ok)
        #expect(try store.regions().contains { $0.state == .paused })
        try await store.update(catalog: url)
        #expect(store.mapVersion == UpdateFixture.newVersion)
        #expect(try store.regions().allSatisfy { $0.state == .completed })
        let stats = try server.stats()
        let sent = changed.values.reduce(0) { $0 + (stats["/cat-\(UpdateFixture.newVersion)/" + $1.url]?.bytes ?? 0) }
        // What the first store fetched is not fetched again (at most one unflushed block per bundle).
        #expect(sent - Int(total) <= changed.count * 64 * 1024, "sent \(sent) for \(total)")
        #expect(try await store.verify(full: true).isEmpty)
    }

    @Test func cancelledUpdateRemovesItsBytesAndTheRegionsAreOutdatedAgain() async throws {
        let fixture = try await UpdateFixture.ready()
        let device = Device()
        let server = try FaultServer(root: fixture.served)
        defer { server.stop() }
        let url = try fixture.tricklingCatalog("trickle-cancel.json", on: server)
        let store = try await device.open(image: fixture.image)
        let task = try store.startUpdate(catalog: url)
        #expect(await eventually(300) { partialBytes(device.storage) > 0 })
        task.pause()
        #expect(await eventually(180) { task.isPaused })
        task.cancel()
        await #expect(throws: MapStoreError.self) { try await task.wait() }
        #expect(partialBytes(device.storage) == 0)
        let states = try store.regions().map { ($0.id, $0.state) }
        #expect(states.allSatisfy { $0.1 == .outdated }, "\(states)")
        #expect(store.mapVersion == UpdateFixture.oldVersion)
        #expect(try await store.verify(full: true).isEmpty)
    }

    @Test func updateReportsEachRegionsProgressUpToItsTotal() async throws {
        let fixture = try await UpdateFixture.ready()
        let device = Device()
        let nginx = try NginxServer(root: fixture.served)
        defer { nginx.stop() }
        let catalogURL = URL(string: "cat-\(UpdateFixture.newVersion)/catalog.json", relativeTo: nginx.baseURL)!.absoluteURL
        let store = try await device.open(image: fixture.image)
        let events = store.events()
        let collected = Task { () -> [StoreEvent] in
            var seen: [StoreEvent] = []
            for await event in events {
                seen.append(event)
                if case .updateFinished = event { break }
            }
            return seen
        }
        try await store.update(catalog: catalogURL)
        let seen = await collected.value

        // Each installed region's total: the bundles it needs that the old image lacks.
        let changed = try fixture.changedBundles()
        let catalog = try fixture.catalog(UpdateFixture.newVersion)
        var expected: [RegionID: Int64] = [:]
        for region in catalog.regions {
            let missing = Set(region.bundles).filter { changed[$0] != nil }
            if !missing.isEmpty, try store.regions().contains(where: { $0.id == region.id }) {
                expected[region.id] = missing.reduce(0) { $0 + (changed[$1]?.size ?? 0) }
            }
        }
        #expect(!expected.isEmpty)
        var reported: [RegionID: [Int64]] = [:]
        for case .progress(let region, let got, let total) in seen {
            #expect(total == expected[region], "\(region): total \(total)")
            reported[region, default: []].append(got)
        }
        #expect(Set(reported.keys) == Set(expected.keys))
        for (region, values) in reported {
            #expect(values == values.sorted(), "\(region) went back: \(values)")
            #expect(values.last == expected[region], "\(region) ended at \(values.last ?? -1) of \(expected[region] ?? -1)")
            #expect(store.progress(of: region) == nil)
        }
    }

    // MARK: paths are file URLs

    @Test func urlPathsRoundTrip() async throws {
        _ = try await offPool { StoreFixture.shared }
        let device = Device()
        let image = PreinstalledImage(url: URL(fileURLWithPath: StoreFixture.shared.imageFolder, isDirectory: true))
        #expect(image.url.path == folderPath(StoreFixture.shared.imageFolder))
        // A trailing slash and a `.` component name the same folder.
        let given = URL(fileURLWithPath: device.folder.join("./storage") + "/", isDirectory: true)
        let store = try await MapStore.open(storage: given, cache: device.cacheURL, preinstalled: image)
        #expect(store.storage.isFileURL && store.storage.path == device.storageFolder)
        #expect(MapStore.isStorage(store.storage))

        let file = try #require(try StoreFixture.shared.manifest().files.first)
        let located = try #require(try store.path(of: file.path))
        #expect(located.isFileURL && located.path == store.storage.path + "/store/" + file.path.string)
        #expect(FileManager.default.fileExists(atPath: located.path))
        #expect(try store.path(of: "no/such/file") == nil)

        let moved = URL(fileURLWithPath: device.folder.join("moved"), isDirectory: true)
        try await store.moveData(to: moved)
        #expect(store.storage.path == moved.standardizedFileURL.path)
        #expect(try store.path(of: file.path)?.path == moved.standardizedFileURL.path + "/store/" + file.path.string)
        let report = try await store.repair()
        #expect(report.storage == store.storage)
        #expect(try await MapStore.verifyInstalled(storage: moved, full: true).problems.isEmpty)

        #expect(try await store.switchStorage(to: device.storageURL) == .empty)
        #expect(store.storage.path == device.storageFolder)
        #expect(try await store.switchStorage(to: moved) == .ok)
        #expect(try await store.importCacheSeed(at: URL(fileURLWithPath: StoreFixture.shared.imageFolder + "/cache-seed.sqlite")) >= 0)
    }
}

/// True when `result` failed with `MapStoreError.cancelled`.
func cancelled<T>(_ result: Result<T, any Error>) -> Bool {
    if case .failure(MapStoreError.cancelled) = result { true } else { false }
}
