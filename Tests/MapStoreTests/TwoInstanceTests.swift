import Foundation
import MapFormat
import MapStore
import Synchronization
import TestSupport
import Testing

/// Two `MapStore` instances on one storage in one process take turns exactly like two processes
/// (issue 40 item 3): instance B's delete waits while instance A's download holds the storage, and
/// both succeed, instead of B's write running in the middle of A's and A failing with
/// "storage is interruptedOperation". Driven by events, not sleeps: A's bundle trickles from the fault
/// server, B's wait is heard through the library's hook, then A pauses (letting B go) and resumes.
@Suite(.timeLimit(.minutes(10))) struct TwoInstanceTests {
    enum First { case bWaited, bFinished }

    @Test func twoInstancesInOneProcessTakeTurns() async throws {
        _ = try await offPool { StoreFixture.shared }
        let server = try FaultServer(root: DownloadTests.catalogFolder)
        defer { server.stop() }
        let name = try DownloadTests.faultCatalog("two-instances.json", regions: ["europe/li"], query: "?fault=trickle&rate=200&times=1")
        let device = Device()
        let a = try await device.open(catalog: server.url(name))
        let b = try await device.open(catalog: server.url(name))

        // Whichever comes first: B's write waits (the hook), or B's write ends without having waited.
        let storage = b.storage.path
        let (firsts, first) = AsyncStream.makeStream(of: First.self)
        MapStore.waitingForOtherProcess.withLock { hooks in
            hooks["two-instances " + storage] = { folder in if folder == storage { first.yield(.bWaited) } }
        }
        defer { MapStore.waitingForOtherProcess.withLock { $0["two-instances " + storage] = nil } }

        // A holds the storage once its bundle's bytes arrive.
        let download = try a.download(regions: ["europe/li"])
        for await case .progress(_, let received, _) in download.events where received > 0 { break }

        let delete = Task {
            defer { first.yield(.bFinished) }
            try await b.deleteRegions(["europe/ch/zh"])
        }
        var order = firsts.makeAsyncIterator()
        let firstSeen = await order.next()
        #expect(firstSeen == .bWaited, "instance B's delete ran while instance A's download held the storage")

        // A pauses (its fetched bytes kept): B's delete goes on; A resumes and completes after it.
        #expect(download.pause())
        try await delete.value
        download.resume()
        try await download.wait()

        // A took the storage after B's delete, and sees it.
        let ids = try a.regions().map(\.id)
        #expect(ids.contains("europe/li") && !ids.contains("europe/ch/zh"), "\(ids)")
        let reopened = try await device.open()
        #expect(reopened.initialStatus == .ok)
        #expect(try await reopened.verify(full: true).isEmpty)
    }
}
