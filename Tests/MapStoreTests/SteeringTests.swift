import Foundation
import MapFormat
import MapStore
import Synchronization
import TestSupport
import Testing

/// Apps steer downloads by region id, the network policy applies to transfers under way, and the CLI's
/// store verbs stop cleanly on a signal (issue 40 items 5, 6 and 7). Every wait is on an event, not a
/// clock: the bundle trickles from the fault server, so a transfer is under way when the test acts.
@Suite(.timeLimit(.minutes(10))) struct SteeringTests {
    /// A store of the fixture image whose `europe/li` bundle trickles (first request only), and its task.
    static func trickling(_ name: String, options: MapStore.Options = .init()) async throws -> (FaultServer, Device, MapStore) {
        _ = try await offPool { StoreFixture.shared }
        let server = try FaultServer(root: DownloadTests.catalogFolder)
        let catalog = try DownloadTests.faultCatalog(name, regions: ["europe/li"], query: "?fault=trickle&rate=200&times=1")
        let device = Device()
        let store = try await device.open(catalog: server.url(catalog), options: options)
        return (server, device, store)
    }

    /// Returns once `task` has received bytes (it holds a transfer).
    static func fetching(_ task: DownloadTask) async {
        for await case .progress(_, let received, _) in task.events where received > 0 { return }
    }

    /// Returns once `task` announced `state` for `region`.
    static func announced(_ task: DownloadTask, _ region: RegionID, _ state: RegionState) async {
        for await case .stateChanged(let id, let now) in task.events where id == region && now == state { return }
    }

    /// The first `.networkChanged` of `events` that satisfies `matching`.
    static func networkChange(_ events: AsyncStream<StoreEvent>, _ matching: (NetworkChange) -> Bool) async -> NetworkChange? {
        for await case .networkChanged(let change) in events where matching(change) { return change }
        return nil
    }

    @Test func meteredNetworkPausesRunningDownloadsAndResumesThemWhenAllowed() async throws {
        let (server, device, store) = try await Self.trickling(
            "metered-pause.json", options: .init(networkPolicy: NetworkPolicy(allowMetered: false)))
        // The device's folders live as long as it does.
        defer { withExtendedLifetime(device) { server.stop() } }
        let events = store.events()
        let task = try store.download(regions: ["europe/li"])
        await Self.fetching(task)

        store.networkChanged(metered: true)
        #expect(task.state == .paused)
        await Self.announced(task, "europe/li", .paused)
        let paused = await Self.networkChange(events) { !$0.pausedDownloads.isEmpty }
        #expect(paused == NetworkChange(metered: true, fetchingPermitted: false).with(paused: ["europe/li"]))
        #expect(try store.availableRegions().first { $0.id == "europe/li" }?.state == .paused)

        store.networkChanged(metered: false)
        let resumed = await Self.networkChange(events) { !$0.resumedDownloads.isEmpty }
        #expect(resumed?.resumedDownloads == ["europe/li"] && resumed?.fetchingPermitted == true)
        try await task.wait()
        #expect(try store.regions().contains { $0.id == "europe/li" })
        #expect(try await store.verify(full: true).isEmpty)
    }

    /// A paused download still claims its fetched bytes (issue 40 item 1: claims live as long as the task):
    /// cancelling a second download of the same region removes nothing the paused one needs, and the
    /// paused one resumes from its bytes. Before `StoreRuntime` a pause let go of the claims, so the
    /// second task's clean-up deleted the first's partial bundle.
    @Test func cancellingAnotherTaskKeepsAPausedTasksBytes() async throws {
        let (server, device, store) = try await Self.trickling("claims-outlive-pause.json")
        defer { withExtendedLifetime(device) { server.stop() } }
        let first = try store.download(regions: ["europe/li"])
        await Self.fetching(first)
        #expect(first.pause())
        await Self.announced(first, "europe/li", .paused)
        let kept = try store.spaceNeeded(for: ["europe/li"]).temporaryBytes
        try #require(kept > 0, "the pause kept no fetched bytes")

        let second = try store.download(regions: ["europe/li"])
        second.cancel()
        do {
            try await second.wait()
            Issue.record("the cancelled download completed")
        } catch {
            guard case .cancelled = error else { throw error }
        }
        #expect(
            try store.spaceNeeded(for: ["europe/li"]).temporaryBytes >= kept, "the cancelled task removed the paused task's fetched bytes")
        #expect(first.state == .paused)

        first.resume()
        try await first.wait()
        #expect(try store.regions().contains { $0.id == "europe/li" })
        #expect(try await store.verify(full: true).isEmpty)
    }

    @Test func appPausesResumesAndCancelsByRegionID() async throws {
        let (server, device, store) = try await Self.trickling("steer-by-id.json")
        defer { withExtendedLifetime(device) { server.stop() } }
        let task = try store.download(regions: ["europe/li"])
        #expect(task.state == .running)
        await Self.fetching(task)
        #expect(store.pauseDownload("europe/li"))
        #expect(task.state == .paused)
        await Self.announced(task, "europe/li", .paused)
        #expect(!store.pauseDownload("world"), "nothing downloads world")

        #expect(try store.resumeDownload("europe/li").map { $0 === task } == [true])
        #expect(try await store.cancelDownload("europe/li"))
        await #expect(throws: MapStoreError.self) { try await task.wait() }
        #expect(task.state == .finished)
        #expect(try store.availableRegions().first { $0.id == "europe/li" }?.state == .available)
        #expect(!(try await store.cancelDownload("europe/li")), "nothing left to cancel")
    }

    /// Deleting a region that is being downloaded drops it: the download is cancelled, the region is
    /// `available`, the store stays `ok`; a region that is neither installed nor downloading is refused
    /// with a message for an app (no command-line advice).
    @Test func deletingADownloadingRegionCancelsItsDownload() async throws {
        let (server, device, store) = try await Self.trickling("delete-downloading.json")
        defer { server.stop() }
        let task = try store.download(regions: ["europe/li"])
        await Self.fetching(task)
        try await store.deleteRegions(["europe/li"])
        await #expect(throws: MapStoreError.self) { try await task.wait() }
        #expect(try store.availableRegions().first { $0.id == "europe/li" }?.state == .available)
        #expect(try store.regions().map(\.id) == StoreFixture.allRegions)

        var refused: MapStoreError?
        do { try await store.deleteRegions(["europe/atlantis"]) } catch { refused = error }
        guard case .unknownRegion("europe/atlantis")? = refused else {
            Issue.record("a region neither installed nor downloading was not refused: \(String(describing: refused))")
            return
        }
        #expect(refused.map { !$0.description.contains("mappack") } == true, "\(String(describing: refused))")
        #expect(try await device.open().initialStatus == .ok)
    }

    /// `mappack store download` gets SIGINT while its bundle trickles in: it says what it kept and how to
    /// go on, exits 130, leaves the region `paused` with the bytes fetched; the same command again
    /// installs it.
    @Test func storeDownloadStopsCleanlyOnSIGINT() async throws {
        _ = try await offPool { StoreFixture.shared }
        let server = try FaultServer(root: DownloadTests.catalogFolder)
        defer { server.stop() }
        let catalog = server.url(try DownloadTests.faultCatalog("cli-sigint.json", regions: ["europe/li"], query: "?fault=trickle&rate=200&times=1"))
        let device = Device()
        _ = try await device.open(catalog: catalog)
        let download = try StoreProcess(["download", "europe/li", "--catalog", catalog.absoluteString, "--json"], device: device)
        defer { download.kill() }
        #expect(try await download.prints(#""received":[1-9]"#, within: 120), "\(download.stdout)\(download.stderr)")
        download.signal(SIGINT)
        let stopped = try await download.finish(within: 120)
        #expect(stopped.status == 128 + SIGINT, "\(stopped.stderr)")
        #expect(stopped.stderr.contains("interrupted by SIGINT") && stopped.stderr.contains("paused"), "\(stopped.stderr)")
        #expect(stopped.stderr.contains("run the same command again"), "\(stopped.stderr)")
        let available = try await device.run(["available", "--json"])
        #expect(available.stdout.contains("\"paused\""), "\(available.stdout)")

        let again = try await device.run(["download", "europe/li", "--catalog", catalog.absoluteString])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try await device.open(full: true).initialStatus == .ok)
    }
}

extension NetworkChange {
    /// This change with `paused` downloads.
    func with(paused: [RegionID]) -> NetworkChange {
        var change = self
        change.pausedDownloads = paused
        return change
    }
}
