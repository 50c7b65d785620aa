import Foundation
import MapFormat
import MapIO
import MapStore
import Synchronization
import TestSupport
import Testing

/// Automatic updates through nginx with a short schedule: no call from the app after `open`.
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
            guard rename(folder.join("catalog.next"), folder.join("www/catalog.json")) == 0 else { throw POSIXError(.EIO) }
        }

        var catalogRequests: Int { nginx.requests(path: "/catalog.json") }

        /// The catalog request count once it stays the same for 400 ms (a check in flight has ended);
        /// throws when it keeps growing for 10 s, which a schedule of 100 ms would do.
        func settledCatalogRequests() async throws -> Int {
            var last = catalogRequests
            for _ in 0..<25 {
                try await Task.sleep(for: .milliseconds(400))
                let now = catalogRequests
                if now == last { return now }
                last = now
            }
            throw NeverSettled(requests: last)
        }

        deinit { nginx.stop() }

        struct NeverSettled: Error { let requests: Int }
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

    static func open(_ device: Device, site: Site, policy: NetworkPolicy = .init(), metered: Bool = false) async throws -> MapStore {
        let fixture = try await UpdateFixture.ready()
        var options = MapStore.Options()
        options.catalogURL = site.catalogURL
        options.autoUpdate = true
        options.autoUpdateInterval = .milliseconds(200)
        options.networkPolicy = policy
        options.networkIsMetered = metered
        return try await MapStore.open(storage: device.storageURL, cache: device.cacheURL, preinstalled: fixture.image, options: options)
    }

    @Test func newerCatalogPublishedIsInstalledWithoutAnyCall() async throws {
        _ = try await UpdateFixture.ready()
        let site = try Site(UpdateFixture.oldVersion)
        let device = Device()
        let store = try await AutoUpdateTests.open(device, site: site)
        let log = EventLog(store.events())
        // Checked at open and on schedule; nothing newer yet.
        #expect(await eventually(180) { site.catalogRequests >= 3 })
        #expect(store.mapVersion == UpdateFixture.oldVersion)

        try site.publish(UpdateFixture.newVersion)
        #expect(await eventually(300) { store.mapVersion == UpdateFixture.newVersion })
        let new = UpdateFixture.newVersion
        #expect(await eventually(300) { log.updateSteps.contains("finished \(new)") })
        #expect(log.updateSteps.prefix(3) == ["available \(new)", "started \(new)", "finished \(new)"], "\(log.updateSteps)")
        #expect(try await store.verify(full: true).isEmpty)
        // Up to date again: later checks find nothing to do.
        let requests = site.catalogRequests
        #expect(await eventually(180) { site.catalogRequests >= requests + 2 })
        #expect(log.updateSteps.filter { $0.hasPrefix("started") }.count == 1, "\(log.updateSteps)")
    }

    @Test func meteredNetworkDefersTheUpdateUntilTheAppReportsAnUnmeteredOne() async throws {
        let fixture = try await UpdateFixture.ready()
        let site = try Site(UpdateFixture.newVersion)
        let device = Device()
        // A wifi-only policy on a network the app said at open is metered.
        let store = try await AutoUpdateTests.open(device, site: site, policy: NetworkPolicy(allowMetered: false), metered: true)
        let log = EventLog(store.events())
        let new = UpdateFixture.newVersion
        #expect(await eventually(180) { log.updateSteps.contains("deferred \(new) meteredNetwork") }, "\(log.updateSteps)")
        // Several checks later: still deferred, announced once, and not one bundle fetched.
        let requests = site.catalogRequests
        #expect(await eventually(180) { site.catalogRequests >= requests + 3 })
        #expect(store.mapVersion == UpdateFixture.oldVersion)
        #expect(log.updateSteps.filter { $0.hasPrefix("deferred") }.count == 1, "\(log.updateSteps)")
        #expect(!log.updateSteps.contains { $0.hasPrefix("started") })
        let changed = try fixture.changedBundles()
        try #require(!changed.isEmpty)
        for info in changed.values { #expect(site.nginx.requests(path: "/" + info.url) == 0, "\(info.url)") }

        // No more checks on schedule: from here only the app's report can start the update.
        store.autoUpdateInterval = .seconds(3600)
        // Still metered: nothing. Unmetered: the deferred update runs.
        store.networkChanged(metered: true)
        try await Task.sleep(for: .milliseconds(500))
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
        var store: MapStore? = try await AutoUpdateTests.open(device, site: site)
        weak let released = store
        let log = EventLog(store!.events())
        #expect(await eventually(180) { site.catalogRequests >= 3 })
        store = nil
        // The schedule holds the store weakly: releasing it ends the store, its schedule and its event streams.
        #expect(await eventually(300) { released == nil }, "the store outlived its last reference")
        #expect(await eventually(300) { log.ended.withLock { $0 } })
        let requests = site.catalogRequests
        try await Task.sleep(for: .milliseconds(800))
        #expect(site.catalogRequests == requests, "checks went on after the store was released")
    }

    @Test func turningAutoUpdateOnChecksAndTheIntervalIsSettable() async throws {
        _ = try await UpdateFixture.ready()
        let site = try Site(UpdateFixture.oldVersion)
        let device = Device()
        var options = MapStore.Options()
        options.catalogURL = site.catalogURL
        let store = try await MapStore.open(
            storage: device.storageURL, cache: device.cacheURL, preinstalled: UpdateFixture.shared.image, options: options)
        // Off: an interval alone checks nothing.
        store.autoUpdateInterval = .milliseconds(100)
        try await Task.sleep(for: .milliseconds(600))
        let before = site.catalogRequests
        #expect(before <= 1, "\(before) catalog requests with autoUpdate off")
        store.autoUpdate = true
        #expect(await eventually(180) { site.catalogRequests >= before + 3 })
        // A long interval replaces the short one at once (a check under way may still finish); turning off stops the schedule.
        store.autoUpdateInterval = .seconds(3600)
        let settled = try await site.settledCatalogRequests()
        try await Task.sleep(for: .milliseconds(600))
        #expect(site.catalogRequests == settled)
        store.autoUpdateInterval = .milliseconds(100)
        #expect(await eventually(180) { site.catalogRequests >= settled + 2 })
        store.autoUpdate = false
        let stopped = try await site.settledCatalogRequests()
        try await Task.sleep(for: .milliseconds(600))
        #expect(site.catalogRequests == stopped)
    }
}
