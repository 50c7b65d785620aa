import Foundation
import MapFormat
import MapIO
import MapStore
import Synchronization
import TestSupport
import Testing

/// Run-time region downloads on a store that came from an image, against nginx and the fault server.
@Suite struct DownloadTests {
    static var catalogFolder: String { StoreFixture.shared.folder.join("catalog") }

    static func catalog() throws -> Catalog {
        try JSONDecoder().decode(Catalog.self, from: Data(contentsOf: URL(fileURLWithPath: catalogFolder + "/catalog.json")))
    }

    /// The served path and declared size of the single bundle of region `id`'s own bundles.
    static func bundle(of id: RegionID) throws -> (path: String, size: Int64, digest: BundleDigest) {
        let catalog = try catalog()
        let digest = try #require(catalog.regions.first { $0.id == id }?.bundles.first)
        let info = try #require(catalog.bundles[digest])
        return ("/" + info.url, info.size, digest)
    }

    /// A copy of the fixture catalog with `query` appended to the bundle urls of `regions`.
    static func faultCatalog(_ name: String, regions: [RegionID], query: String) throws -> String {
        var catalog = try catalog()
        let digests = Set(catalog.regions.filter { regions.contains($0.id) }.flatMap(\.bundles))
        for digest in digests { catalog.bundles[digest]!.url += query }
        try CanonicalJSON.encode(catalog).write(to: URL(fileURLWithPath: catalogFolder + "/" + name))
        return name
    }

    @Test func downloadsTwoRegionsInParallelWithoutRefetchingPresentBundles() async throws {
        _ = try await offPool { StoreFixture.shared }
        let nginx = try NginxServer(root: DownloadTests.catalogFolder)
        defer { nginx.stop() }
        let device = Device()
        let store = try await device.open(catalog: URL(string: "catalog.json", relativeTo: nginx.baseURL)!.absoluteURL)
        try await store.setCatalogURL(URL(string: "catalog.json", relativeTo: nginx.baseURL)!.absoluteURL)
        #expect(try store.availableRegions().map(\.id) == ["europe", "europe/li", "world"])
        #expect(!store.mayBeOutOfSpace(for: ["europe"]))
        let world = try store.download(regions: ["world"])
        let europe = try store.download(regions: ["europe"])
        async let first: Void = world.wait()
        async let second: Void = europe.wait()
        _ = try await (first, second)
        #expect(try store.regions().map(\.id) == ["europe", "europe/ch", "europe/ch/be", "europe/ch/be/thun", "europe/ch/zh", "europe/li", "world"])
        #expect(try store.regions().allSatisfy { $0.state == .completed })
        // Switzerland's bundles came with the image: never requested.
        for id: RegionID in ["europe/ch", "europe/ch/be", "europe/ch/zh"] {
            #expect(nginx.requests(path: try DownloadTests.bundle(of: id).path) == 0)
        }
        for id: RegionID in ["world", "europe", "europe/li"] {
            let bundle = try DownloadTests.bundle(of: id)
            #expect(nginx.bytesSent(path: bundle.path) == Int(bundle.size), "\(id)")
        }
        #expect(try await store.verify(full: true).isEmpty)
        #expect(try await MapStore.verifyInstalled(storage: URL(fileURLWithPath: device.storage), full: true).problems.isEmpty)
        let details = try store.regionDetails("europe/ch", language: "de")
        #expect(details.name == "Schweiz" && details.cities == ["Bern", "Zürich"] && details.state == .completed)
        #expect(try await device.open(full: true).initialStatus == .ok)
    }

    @Test func killedDownloadResumesFromFetchedBytes() async throws {
        _ = try await offPool { StoreFixture.shared }
        let server = try FaultServer(root: DownloadTests.catalogFolder)
        defer { server.stop() }
        let device = Device()
        let li = try DownloadTests.bundle(of: "europe/li")
        let name = try DownloadTests.faultCatalog("trickle-kill.json", regions: ["europe/li"], query: "?fault=trickle&rate=1000&times=1")
        _ = try await device.open(catalog: server.url(name))
        let process = ChildProcess(
            "mappack",
            ["store", "download", "europe/li", "--catalog", server.url(name).absoluteString, "--storage", device.storage, "--cache", device.cache],
            timeout: 300)
        // What the process says goes to a file, for the failure message.
        let logFolder = TemporaryFolder("kill-download")
        let log = logFolder.join("stderr.log")
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.process.standardOutput = FileHandle.nullDevice
        process.process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        try process.start()
        // The bundle takes seconds at this rate and is past 3000 bytes for only the last few: the watch
        // runs on its own thread and kills from there, because with other suites keeping both cores'
        // cooperative threads busy, a task's wake-ups can come later than the end of the download.
        let storage = device.storage
        let reached = try await offPool { () -> Bool in
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                if partialBytes(storage) >= 3000 {
                    process.signal(SIGKILL)
                    return true
                }
                usleep(10_000)
            }
            return false
        }
        process.signal(SIGKILL)
        try process.wait()
        #expect(
            reached,
            "partial: \(partialBytes(device.storage)) bytes; exit \(process.terminationStatus); stderr: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "?"); server: \((try? server.served(li.path)).map { "\($0)" } ?? "?")"
        )
        #expect(partialBytes(device.storage) < li.size)

        let store = try await device.open(catalog: server.url(name))
        #expect(try store.availableRegions().first { $0.id == "europe/li" }?.state == .paused)
        try await store.download(regions: ["europe/li"]).wait()
        #expect(try store.regions().contains { $0.id == "europe/li" && $0.state == .completed })
        let sent = try server.served(li.path).bytes
        #expect(Double(sent) <= 1.05 * Double(li.size), "sent \(sent) for \(li.size)")
        #expect(try await store.verify(full: true).isEmpty)
    }

    @Test func pauseAndResumeCompletes() async throws {
        _ = try await offPool { StoreFixture.shared }
        let server = try FaultServer(root: DownloadTests.catalogFolder)
        defer { server.stop() }
        let device = Device()
        // Slow enough (the bundle takes about 20 s) that the event watcher sees progress and the pause
        // lands before the end, even when other suites keep the cooperative threads busy.
        let name = try DownloadTests.faultCatalog("trickle-pause.json", regions: ["europe/li"], query: "?fault=trickle&rate=300&times=1")
        let store = try await device.open(catalog: server.url(name))
        let task = try store.download(regions: ["europe/li"])
        let states = Mutex<[RegionState]>([])
        let received = Mutex<Int64>(0)
        let watcher = Task {
            for await event in task.events {
                switch event {
                case .stateChanged(_, let state): states.withLock { $0.append(state) }
                case .progress(_, let bytes, _): received.withLock { $0 = bytes }
                default: break
                }
            }
        }
        #expect(await eventually(300) { received.withLock { $0 } > 0 })
        task.pause()
        #expect(await eventually(300) { states.withLock { $0.last } == .paused })
        #expect(try store.availableRegions().first { $0.id == "europe/li" }?.state == .paused)
        task.resume()
        try await task.wait()
        await watcher.value
        #expect(states.withLock { $0 } == [.downloading, .paused, .downloading, .completed])
        #expect(try await store.verify(full: true).isEmpty)
    }

    @Test func cancelRemovesPartialDataAndMakesRegionAvailable() async throws {
        _ = try await offPool { StoreFixture.shared }
        let server = try FaultServer(root: DownloadTests.catalogFolder)
        defer { server.stop() }
        let device = Device()
        // Slow enough (about 20 s for the bundle) that the cancel lands before the end even on a busy machine.
        let name = try DownloadTests.faultCatalog("trickle-cancel.json", regions: ["europe/li"], query: "?fault=trickle&rate=300")
        let store = try await device.open(catalog: server.url(name))
        let before = try store.regions()
        let task = try store.download(regions: ["europe/li"])
        #expect(await eventually(300) { partialBytes(device.storage) > 0 })
        task.cancel()
        await #expect(throws: MapStoreError.self) { try await task.wait() }
        #expect(partialBytes(device.storage) == 0)
        #expect(try DirectoryWalker.walk(device.storage + "/downloads").filter(\.isRegular).filter { !$0.relativePath.hasSuffix(".lock") }.isEmpty)
        #expect(try store.availableRegions().first { $0.id == "europe/li" }?.state == .available)
        #expect(try store.regions() == before)
        #expect(try await store.verify(full: true).isEmpty)
    }

    @Test func meteredNetworkIsRefusedUnlessAllowed() async throws {
        _ = try await offPool { StoreFixture.shared }
        let device = Device()
        let store = try await device.open(
            catalog: URL(fileURLWithPath: DownloadTests.catalogFolder + "/catalog.json"),
            options: .init(networkPolicy: NetworkPolicy(allowMetered: false), networkIsMetered: true))
        #expect(store.isNetworkMetered)
        do {
            _ = try store.download(regions: ["europe/li"])
            Issue.record("metered download was not refused")
        } catch {
            guard case .meteredNetworkDisallowed(let regions) = error else { throw error }
            #expect(regions == ["europe/li"])
            #expect(MapStoreError.meteredNetworkDisallowed(regions: regions).description.contains("metered"))
        }
        // One fact about the network, the app's last word: reported unmetered, the policy lets it through.
        store.networkChanged(metered: false)
        #expect(!store.isNetworkMetered)
        try await store.download(regions: ["europe/li"]).wait()
        #expect(try store.regions().contains { $0.id == "europe/li" })
        // Metered again, with a policy that allows metered networks.
        store.networkChanged(metered: true)
        #expect(throws: MapStoreError.self) { try store.download(regions: ["world"]) }
        store.networkPolicy = NetworkPolicy(allowMetered: true)
        try await store.download(regions: ["world"]).wait()
    }

    @Test func serverErrorsBeyondRetryBudgetAreRemoteErrorsNamingURLAndRegion() async throws {
        _ = try await offPool { StoreFixture.shared }
        let server = try FaultServer(root: DownloadTests.catalogFolder)
        defer { server.stop() }
        let device = Device()
        let name = try DownloadTests.faultCatalog("status-500.json", regions: ["europe/li"], query: "?fault=status&code=500")
        let store = try await device.open(catalog: server.url(name), options: .init(fetchAttempts: 2, fetchRetryDelay: .milliseconds(50)))
        do {
            try await store.download(regions: ["europe/li"]).wait()
            Issue.record("download succeeded against HTTP 500")
        } catch {
            #expect(error.category == .remote)
            guard case .remote(let url, let status, let regions, let bundle, _) = error else {
                Issue.record("not remote: \(error)")
                return
            }
            #expect(url.absoluteString.contains(try DownloadTests.bundle(of: "europe/li").path))
            #expect(status == 500)
            #expect(regions == ["europe/li"])
            #expect(bundle == (try DownloadTests.bundle(of: "europe/li").digest))
        }
        #expect(try await store.verify(full: true).isEmpty)
        #expect(try !store.regions().contains { $0.id == "europe/li" })
    }

    /// Needs root to mount a tmpfs; skipped otherwise (the disk-full path is not faked).
    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func diskFullIsALocalErrorNamingTheRegion() async throws {
        _ = try await offPool { StoreFixture.shared }
        let device = Device()
        let mountPoint = device.folder.join("small")
        try FileSystem.makeDirectories(mountPoint)
        let mounted = try Tool.run("/bin/mount", ["-t", "tmpfs", "-o", "size=512k", "tmpfs", mountPoint])
        try #require(mounted.status == 0, "mount -t tmpfs failed: \(mounted.stderr)")
        defer { _ = try? Tool.run("/bin/umount", [mountPoint]) }
        let storage = mountPoint + "/storage"
        let store = try await MapStore.open(
            storage: URL(fileURLWithPath: storage), cache: URL(fileURLWithPath: device.cache),
            preinstalled: StoreFixture.shared.image(archive: false),
            options: .init(catalogURL: URL(fileURLWithPath: DownloadTests.catalogFolder + "/catalog.json"), fetchAttempts: 1))
        // Leave room for the state database's journal, not for Europe's bundles.
        let free = try FileSystem.freeBytes(at: mountPoint)
        try Data(count: Int(free) - 24 * 1024).write(to: URL(fileURLWithPath: mountPoint + "/filler"))
        do {
            try await store.download(regions: ["europe"]).wait()
            Issue.record("download fit into a full disk")
        } catch {
            #expect(error.category == .local, "\(error)")
            if case .local(_, let code, let regions, _, _) = error {
                #expect(code == ENOSPC)
                #expect(regions == ["europe"])
            } else {
                Issue.record("not a local failure: \(error)")
            }
        }
        try FileSystem.removeFile(mountPoint + "/filler")
        #expect(try await store.verify(full: true).isEmpty)
        #expect(try await MapStore.verifyInstalled(storage: URL(fileURLWithPath: storage), full: true).problems.isEmpty)
    }
}
