import Foundation
import MapFormat
import MapStore
import Synchronization
import TestSupport
import Testing

/// The app's say over automatic updates (issue 31, Magic Lane's `shouldUpdateWorldwideRoadMap`): it can
/// defer or decline one, and the store reports why.
@Suite struct AutoUpdateApprovalTests {
    static func deferrals(_ log: AutoUpdateTests.EventLog) -> [String] {
        log.all.compactMap { event -> String? in
            guard case .updateDeferred(let info, let reason) = event else { return nil }
            return "\(info.availableVersion) \(reason)"
        }
    }

    static func declines(_ log: AutoUpdateTests.EventLog) -> [String] {
        log.all.compactMap { event -> String? in
            guard case .updateDeclined(let info, let reason) = event else { return nil }
            return "\(info.availableVersion) \(reason)"
        }
    }

    @Test func theAppDefersThenDeclinesAnAutomaticUpdateAndSaysWhy() async throws {
        let fixture = try await UpdateFixture.ready()
        let site = try AutoUpdateTests.Site(UpdateFixture.newVersion)
        let device = Device()
        var options = MapStore.Options()
        options.catalogURL = site.catalogURL
        options.autoUpdateInterval = .milliseconds(200)
        let store = try await MapStore.open(storage: device.storageURL, cache: device.cacheURL, preinstalled: fixture.image, options: options)
        let answer = Mutex(AutoUpdateDecision.later(reason: "on a call"))
        let asked = Mutex(0)
        // Before automatic updates start, so the first check asks too.
        store.autoUpdateApproval = { _ in
            asked.withLock { $0 += 1 }
            return answer.withLock { $0 }
        }
        let log = AutoUpdateTests.EventLog(store.events())
        store.autoUpdate = true
        let new = UpdateFixture.newVersion

        // Later: asked at every check, the deferral reported once, with the app's reason; nothing fetched.
        #expect(await eventually(300) { asked.withLock { $0 } >= 3 })
        #expect(store.mapVersion == UpdateFixture.oldVersion)
        #expect(Self.deferrals(log) == ["\(new) app(reason: \"on a call\")"], "\(log.updateSteps)")
        #expect(!log.updateSteps.contains { $0.hasPrefix("started") })

        // Declined: reported once, and the store neither asks about that version again nor installs it.
        answer.withLock { $0 = .decline(reason: "the user said no") }
        #expect(await eventually(300) { Self.declines(log) == ["\(new) the user said no"] })
        let askedThen = asked.withLock { $0 }
        let requests = site.catalogRequests
        #expect(await eventually(300) { site.catalogRequests >= requests + 3 })
        #expect(asked.withLock { $0 } == askedThen)
        #expect(Self.declines(log).count == 1)
        #expect(store.mapVersion == UpdateFixture.oldVersion)
        #expect(!log.updateSteps.contains { $0.hasPrefix("started") })
        for info in try fixture.changedBundles().values { #expect(site.nginx.requests(path: "/" + info.url) == 0, "\(info.url)") }

        // The app's own update is not asked about.
        store.autoUpdate = false
        try await store.update()
        #expect(store.mapVersion == new)
        #expect(asked.withLock { $0 } == askedThen)
    }
}
