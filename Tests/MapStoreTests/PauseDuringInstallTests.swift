import Foundation
import MapFormat
import MapStore
import Synchronization
import TestSupport
import Testing

/// A pause that lands while a download or an update installs is not silently dropped (issue 31): the
/// install runs to its commit, and `pause()` says it did not pause.
@Suite struct PauseDuringInstallTests {
    /// Holds the work on one storage at a named point until `open()`.
    final class Gate: Sendable {
        let root: String
        let reached = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)

        init(_ point: String, storage: String) {
            root = folderPath(storage)
            CrashPoint.storageHooks.withLock { [reached, release] in
                $0[folderPath(storage)] = { name in
                    guard name == point else { return }
                    reached.signal()
                    release.wait()
                }
            }
        }

        /// True once the work waits at the point (within ten minutes).
        func held() async throws -> Bool { try await offPool { [reached] in reached.wait(timeout: .now() + 600) == .success } }

        func open() {
            CrashPoint.storageHooks.withLock { $0[root] = nil }
            release.signal()
        }
    }

    @Test func pauseOfADownloadThatInstallsIsRefusedAndTheDownloadCompletes() async throws {
        _ = try await offPool { StoreFixture.shared }
        let nginx = try NginxServer(root: DownloadTests.catalogFolder)
        defer { nginx.stop() }
        let device = Device()
        let store = try await device.open(catalog: URL(string: "catalog.json", relativeTo: nginx.baseURL)!.absoluteURL)
        let gate = Gate("download.midStaging", storage: device.storage)
        defer { gate.open() }
        let task = try store.download(regions: ["europe/li"])
        try #require(try await gate.held(), "the download never reached its install")
        let paused = task.pause()
        gate.open()
        #expect(!paused, "pause() during the install said it paused")
        try await task.wait()
        #expect(!task.isPaused)
        #expect(try store.regions().first { $0.id == "europe/li" }?.state == .completed)
    }

    @Test func pauseOfAnUpdateThatInstallsIsRefusedAndTheUpdateCompletes() async throws {
        let fixture = try await UpdateFixture.ready()
        let device = Device()
        let store = try await device.open(image: fixture.image)
        let gate = Gate("update.midStaging", storage: device.storage)
        defer { gate.open() }
        let task = try store.startUpdate(catalog: fixture.catalogURL(UpdateFixture.newVersion))
        try #require(try await gate.held(), "the update never reached its install")
        let paused = task.pause()
        gate.open()
        #expect(!paused, "pause() during the install said it paused")
        try await task.wait()
        #expect(!task.isPaused)
        #expect(store.mapVersion == UpdateFixture.newVersion)
    }
}
