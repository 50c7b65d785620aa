import Foundation
import MapFormat
import MapStore
import Synchronization
import TestSupport
import Testing

/// `repair()` fetching a bundle again through the one fetch client (issue 35 item 2): only failures
/// worth it are tried again, and the wait between attempts is spent with the store's lock let go.
@Suite struct RepairFetchTests {
    /// A store on `device` that downloaded `europe/li` from `server`'s catalog `name`, then lost the
    /// region's downloaded file; the served path of the region's bundle.
    static func storeMissingADownloadedFile(
        _ device: Device, server: FaultServer, name: String, attempts: Int
    ) async throws -> (MapStore, String) {
        let options = MapStore.Options(fetchAttempts: attempts, fetchRetryDelay: .milliseconds(50))
        let first = try await device.open(catalog: server.url(name), options: options)
        try await first.download(regions: ["europe/li"]).wait()
        let li = try DownloadTests.bundle(of: "europe/li")
        let manifest = try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: device.storage + "/manifest.json")), file: "manifest.json")
        let downloaded = try #require(manifest.files.first { $0.bundle == li.digest })
        try FileManager.default.removeItem(atPath: device.storage + "/store/" + downloaded.path.string)
        return (try await device.open(catalog: server.url(name), options: options), li.path)
    }

    /// The bundle's second request (the repair's first) is answered 503 with `Retry-After: 600`.
    /// While the repair waits for its next attempt, another call that takes the store's lock
    /// (`verify`) completes, and the server has still seen no further request. Before issue 35 the
    /// repair slept under the lock (ignoring `Retry-After`): `verify` waited for the whole repair.
    @Test func anotherCallGoesOnWhileRepairWaitsToRetry() async throws {
        _ = try await offPool { StoreFixture.shared }
        let server = try FaultServer(root: DownloadTests.catalogFolder)
        defer { server.stop() }
        let device = Device()
        let name = try DownloadTests.faultCatalog(
            "repair-503.json", regions: ["europe/li"], query: "?fault=status&code=503&retry-after=600&skip=1&times=2")
        let (store, path) = try await Self.storeMissingADownloadedFile(device, server: server, name: name, attempts: 3)
        #expect(try server.served(path).requests == 1)

        // Signalled when the repair begins to wait, or when it ends (then it never waited with the lock let go).
        let waiting = DispatchSemaphore(value: 0)
        let reachedWait = Mutex(false)
        let root = folderPath(device.storage)
        CrashPoint.storageHooks.withLock {
            $0[root] = { name in
                guard name == "repair.retryWait" else { return }
                reachedWait.withLock { $0 = true }
                waiting.signal()
            }
        }
        defer { CrashPoint.storageHooks.withLock { $0[root] = nil } }
        let repairing = Task {
            defer { waiting.signal() }
            return try await store.repair()
        }
        let signalled = try await offPool { waiting.wait(timeout: .now() + 600) == .success }
        try #require(signalled && reachedWait.withLock { $0 }, "the repair never waited for a retry with the store's lock let go")
        #expect(try server.served(path).requests == 2)

        #expect(try await store.verify(full: false).count == 1, "verify did not see the missing file")
        #expect(try server.served(path).requests == 2, "verify returned only after the repair's next attempt")

        // The wait ends when the repair's task is cancelled; a later repair fetches the bundle.
        repairing.cancel()
        let outcome = await repairing.result
        #expect(cancelled(outcome), "\(outcome)")
        let report = try await store.repair()
        #expect(report.actions == [.restoredFiles(count: 1, from: .network)], "\(report.actions)")
        #expect(try await store.verify(full: true).isEmpty)
    }

    /// A 404 is an answer, not an outage: repair asks once and says so; before issue 35 it asked
    /// `fetchAttempts` times.
    @Test func notFoundIsNotRetried() async throws {
        _ = try await offPool { StoreFixture.shared }
        let server = try FaultServer(root: DownloadTests.catalogFolder)
        defer { server.stop() }
        let device = Device()
        let name = try DownloadTests.faultCatalog("repair-404.json", regions: ["europe/li"], query: "?fault=status&code=404&skip=1")
        let (store, path) = try await Self.storeMissingADownloadedFile(device, server: server, name: name, attempts: 3)
        do {
            let report = try await store.repair()
            Issue.record("repair restored a bundle the server does not have: \(report.actions)")
        } catch {
            guard case .repairFailed = error else {
                Issue.record("not repairFailed: \(error)")
                return
            }
        }
        #expect(try server.served(path).requests == 2, "the repair asked for the missing bundle more than once")
    }
}
