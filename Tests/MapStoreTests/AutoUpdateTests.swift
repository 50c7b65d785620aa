import Foundation
import MapFormat
import MapIO
import MapStore
import Synchronization
import TestSupport
import Testing

/// Automatic updates through nginx, on a schedule the test drives with its own clock: no call from the
/// app after `open`, and no wait for the wall clock to see that nothing happened.
@Suite struct AutoUpdateTests {
    /// A web site serving one demo-world version's catalog and bundles at `catalog.json`.
    final class Site: @unchecked Sendable {
        let folder = TemporaryFolder("auto-site")
        let nginx: NginxServer
        var catalogURL: URL { URL(string: "catalog.json", relativeTo: nginx.baseURL)!.absoluteURL }

        init(_ version: MapVersion) throws {
            let fixture = UpdateFixture.shared
            try FileManager.default.copyItem(atPath: fixture.served + "/cat-\(version)", toPath: folder.join("www"))
            nginx = try NginxServer(root: folder.join("www"))
        }

        /// Publishes `version` over what is served: its bundles first, then its catalog in one rename.
        func publish(_ version: MapVersion) throws {
            let source = UpdateFixture.shared.served + "/cat-\(version)"
            for entry in try DirectoryWalker.walk(source) where entry.isRegular && entry.relativePath != "catalog.json" {
                let target = folder.join("www/" + entry.relativePath)
                try FileManager.default.createDirectory(atPath: FileSystem.parent(target), withIntermediateDirectories: true)
                if !FileManager.default.fileExists(atPath: target) {
                    try FileManager.default.copyItem(atPath: source + "/" + entry.relativePath, toPath: target)
                }
            }
            try FileManager.default.copyItem(atPath: source + "/catalog.json", toPath: folder.join("catalog.next"))
            guard unsafe rename(folder.join("catalog.next"), folder.join("www/catalog.json")) == 0 else { throw POSIXError(.EIO) }
        }

        var catalogRequests: Int { nginx.requests(path: "/catalog.json") }

        deinit { nginx.stop() }
    }

    /// Every store event from now on, collected on a task of its own.
    final class EventLog: Sendable {
        let events = Mutex<[StoreEvent]>([])
        let ended = Mutex(false)
        init(_ stream: AsyncStream<StoreEvent>) {
            Task {
                for await event in stream { self.events.withLock { $0.append(event) } }
                self.ended.withLock { $0 = true }
            }
        }
        var all: [StoreEvent] { events.withLock { $0 } }

        /// Names of the update events, in order (`available 2026.12.0`, `started`, `deferred`, `finished 2026.12.0`).
        var updateSteps: [String] {
            all.compactMap { event -> String? in
                switch event {
                case .updateAvailable(let info): "available \(info.availableVersion)"
                case .updateStarted(let info): "started \(info.availableVersion)"
                case .updateDeferred(let info, let reason): "deferred \(info.availableVersion) \(reason)"
                case .updateFinished(let version): "finished \(version)"
                case .updateFailed(let error): "failed \(error)"
                default: nil
                }
            }
        }
    }

    /// The schedule's interval in the tests (on the test's clock, so its length costs nothing).
    static let interval = Duration.seconds(60)

    static func open(
        _ device: Device, site: Site, clock: ManualClock, policy: NetworkPolicy = .init(), metered: Bool = false
    ) async throws -> MapStore {
        let fixture = try await UpdateFixture.ready()
        var options = MapStore.Options()
        options.catalogURL = site.catalogURL
        options.autoUpdate = true
        options.autoUpdateInterval = interval
        options.autoUpdateClock = clock
        options.networkPolicy = policy
        options.networkIsMetered = metered
        return try await MapStore.open(storage: device.storageURL, cache: device.cacheURL, preinstalled: fixture.image, options: options)
    }

    /// Moves `clock` on by one interval and returns once the schedule waits again: the check the
    /// interval brought (and an update it started) has ended.
    static func tick(_ clock: ManualClock, by duration: Duration = interval) async throws {
        let sleeps = clock.sleeps
        clock.advance(by: duration)
        try #require(await clock.waitForSleep(after: sleeps), "the schedule did not wait again after its check")
    }

    @Test func newerCatalogPublishedIsInstalledWithoutAnyCall() async throws {
        _ = try await UpdateFixture.ready()
        let site = try Site(UpdateFixture.oldVersion)
        let device = Device()
        let clock = ManualClock()
        let store = try await AutoUpdateTests.open(device, site: site, clock: clock)
        let log = EventLog(store.events())
        // Checked at open and on schedule; nothing newer yet.
        try #require(await clock.waitForSleep(after: 0), "no wait after the check at open")
        try await Self.tick(clock)
        try await Self.tick(clock)
        #expect(await eventually(180) { site.catalogRequests >= 3 })
        #expect(store.mapVersion == UpdateFixture.oldVersion)

        try site.publish(UpdateFixture.newVersion)
        try await Self.tick(clock)
        let new = UpdateFixture.newVersion
        #expect(store.mapVersion == new, "the check after the publish did not update before the schedule waited again")
        #expect(await eventually(300) { log.updateSteps.contains("finished \(new)") })
        #expect(log.updateSteps.prefix(3) == ["available \(new)", "started \(new)", "finished \(new)"], "\(log.updateSteps)")
        #expect(try await store.verify(full: true).isEmpty)
        // Up to date again: later checks find nothing to do.
        let requests = site.catalogRequests
        try await Self.tick(clock)
        try await Self.tick(clock)
        #expect(await eventually(180) { site.catalogRequests >= requests + 2 })
        #expect(log.updateSteps.filter { $0.hasPrefix("started") }.count == 1, "\(log.updateSteps)")
    }

    @Test func meteredNetworkDefersTheUpdateUntilTheAppReportsAnUnmeteredOne() async throws {
        let fixture = try await UpdateFixture.ready()
        let site = try Site(UpdateFixture.newVersion)
        let device = Device()
        let clock = ManualClock()
        // A wifi-only policy on a network the app said at open is metered.
        let store = try await AutoUpdateTests.open(device, site: site, clock: clock, policy: NetworkPolicy(allowMetered: false), metered: true)
        let log = EventLog(store.events())
        let new = UpdateFixture.newVersion
        try #require(await clock.waitForSleep(after: 0), "no wait after the check at open")
        #expect(await eventually(180) { log.updateSteps.contains("deferred \(new) meteredNetwork") }, "\(log.updateSteps)")
        // Several checks later: still deferred, announced once, and not one bundle fetched.
        let requests = site.catalogRequests
        for _ in 0..<3 { try await Self.tick(clock) }
        #expect(await eventually(180) { site.catalogRequests >= requests + 3 })
        #expect(store.mapVersion == UpdateFixture.oldVersion)
        #expect(log.updateSteps.filter { $0.hasPrefix("deferred") }.count == 1, "\(log.updateSteps)")
        #expect(!log.updateSteps.contains { $0.hasPrefix("started") })
        let changed = try fixture.changedBundles()
        try #require(!changed.isEmpty)
        for info in changed.values { #expect(site.nginx.requests(path: "/" + info.url) == 0, "\(info.url)") }

        // Still metered: the report starts nothing (no check, no update). Unmetered: the deferred update runs.
        let sleeps = clock.sleeps
        store.networkChanged(metered: true)
        #expect(clock.sleeps == sleeps && clock.waiting == 1, "a metered report woke the schedule")
        #expect(store.mapVersion == UpdateFixture.oldVersion)
        store.networkChanged(metered: false)
        #expect(await eventually(300) { store.mapVersion == new })
        #expect(await eventually(300) { log.updateSteps.contains("finished \(new)") })
        let after = log.updateSteps.drop { !$0.hasPrefix("deferred") }.filter { !$0.hasPrefix("available") }
        #expect(Array(after) == ["deferred \(new) meteredNetwork", "started \(new)", "finished \(new)"], "\(log.updateSteps)")
        #expect(try await store.verify(full: true).isEmpty)
    }

    @Test func releasedStoreStopsItsScheduleAndDeinitialises() async throws {
        _ = try await UpdateFixture.ready()
        let site = try Site(UpdateFixture.oldVersion)
        let device = Device()
        let clock = ManualClock()
        var store: MapStore? = try await AutoUpdateTests.open(device, site: site, clock: clock)
        weak let released = store
        let log = EventLog(store!.events())
        try #require(await clock.waitForSleep(after: 0), "no wait after the check at open")
        try await Self.tick(clock)
        try await Self.tick(clock)
        #expect(await eventually(180) { site.catalogRequests >= 3 })
        #expect(clock.waiting == 1)
        store = nil
        // The schedule holds the store weakly: releasing it ends the store, its schedule and its event streams.
        #expect(await eventually(300) { released == nil }, "the store outlived its last reference")
        #expect(await eventually(300) { log.ended.withLock { $0 } })
        // Its end cancelled the schedule's wait: no check is left to come, however far the clock moves.
        #expect(clock.waiting == 0, "the released store's schedule still waits for its next check")
        let sleeps = clock.sleeps
        clock.advance(by: Self.interval * 10)
        #expect(clock.sleeps == sleeps && clock.waiting == 0)
    }

    @Test func turningAutoUpdateOnChecksAndTheIntervalIsSettable() async throws {
        _ = try await UpdateFixture.ready()
        let site = try Site(UpdateFixture.oldVersion)
        let device = Device()
        let clock = ManualClock()
        var options = MapStore.Options()
        options.catalogURL = site.catalogURL
        options.autoUpdateClock = clock
        let store = try await MapStore.open(
            storage: device.storageURL, cache: device.cacheURL, preinstalled: UpdateFixture.shared.image, options: options)
        // Off: an interval alone schedules nothing, however far the clock moves.
        store.autoUpdateInterval = Self.interval
        clock.advance(by: Self.interval * 10)
        #expect(clock.sleeps == 0 && clock.waiting == 0, "a schedule runs with autoUpdate off")
        let before = site.catalogRequests
        #expect(before <= 1, "\(before) catalog requests with autoUpdate off")
        store.autoUpdate = true
        try #require(await clock.waitForSleep(after: 0), "no wait after the check autoUpdate = true starts")
        try await Self.tick(clock)
        try await Self.tick(clock)
        #expect(await eventually(180) { site.catalogRequests >= before + 3 })
        // A long interval replaces the short one at once: ten short intervals later the new wait still waits.
        var sleeps = clock.sleeps
        store.autoUpdateInterval = .seconds(3600)
        try #require(await clock.waitForSleep(after: sleeps), "no wait on the new interval")
        sleeps = clock.sleeps
        clock.advance(by: Self.interval * 10)
        #expect(clock.sleeps == sleeps && clock.waiting == 1, "the schedule woke before its new interval")
        // Back to the short one: checks on it again.
        let requests = site.catalogRequests
        store.autoUpdateInterval = Self.interval
        try #require(await clock.waitForSleep(after: sleeps), "no wait on the short interval")
        try await Self.tick(clock)
        try await Self.tick(clock)
        #expect(await eventually(180) { site.catalogRequests >= requests + 2 })
        // Off: the wait is cancelled at once, and the clock moving on starts nothing.
        store.autoUpdate = false
        #expect(clock.waiting == 0, "turning autoUpdate off left the schedule waiting")
        sleeps = clock.sleeps
        clock.advance(by: .seconds(3600 * 10))
        #expect(clock.sleeps == sleeps && clock.waiting == 0)
    }
}
