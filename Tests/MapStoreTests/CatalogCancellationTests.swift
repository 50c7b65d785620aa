import Foundation
import MapFormat
import MapStore
import TestSupport
import Testing

/// Cancelling the task that awaits a catalog fetch ends it at once (issue 31 item 6), whether the server
/// sends slowly or sends nothing at all; the store keeps everything it had.
@Suite struct CatalogCancellationTests {
    /// The fault server's modes: the catalog trickles out over about 45 s, or nothing comes for 60 s.
    static let slowServers: [(fault: String, parameters: [String: String])] = [
        ("trickle", ["rate": "100"]),
        ("stall", ["seconds": "60"]),
    ]

    @Test(arguments: 0..<slowServers.count)
    func cancellingSetCatalogURLStopsTheFetchAtOnce(server index: Int) async throws {
        _ = try await offPool { StoreFixture.shared }
        let server = try FaultServer(root: DownloadTests.catalogFolder)
        defer { server.stop() }
        let device = Device()
        let store = try await device.open(catalog: URL(fileURLWithPath: DownloadTests.catalogFolder + "/catalog.json"))
        let (catalogBefore, availableBefore) = (store.catalogURL, try store.availableRegions().map(\.id))
        let slow = CatalogCancellationTests.slowServers[index]
        let url = server.url("catalog.json", fault: slow.fault, slow.parameters)

        let call = Task { try await store.setCatalogURL(url) }
        // Cancelled once the server has the request, so the fetch is under way.
        #expect(await eventually(60) { ((try? server.served("catalog.json").requests) ?? 0) > 0 })
        let cancelled = ContinuousClock.now
        call.cancel()
        let outcome = await call.result
        let took = ContinuousClock.now - cancelled

        guard case .failure(let error) = outcome, case .cancelled? = error as? MapStoreError else {
            Issue.record("setCatalogURL ended with \(outcome), not cancelled")
            return
        }
        // The server needs 45 s or more; a cancelled fetch ends within about a second (generous bound for a loaded box).
        #expect(took < .seconds(15), "setCatalogURL returned \(took) after the cancel")
        #expect(store.catalogURL == catalogBefore)
        #expect(try store.availableRegions().map(\.id) == availableBefore)
        #expect(try await store.verify(full: false).isEmpty)
    }
}
