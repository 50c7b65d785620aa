import Foundation
import MapFormat
import MapIO
import MapStore
import TestSupport
import Testing

/// Open tells the truth about a state older than the files (issue 40 item 4): a `state.sqlite` rolled
/// back after a download or an update committed its files (a restored backup, a flush the disk lost)
/// gives `initialStatus != .ok`, and `repair()` brings the two together again.
@Suite(.timeLimit(.minutes(10))) struct RolledBackStateTests {
    /// Runs `write` (a CLI store verb that commits files) with the state database set back afterwards
    /// to its copy from before, then checks open, verify and repair.
    func checkRolledBack(_ device: Device, image: String, write: [String]) async throws {
        let installed = try await device.run(["install", "--image", image])
        try #require(installed.status == 0, "\(installed.stderr)")
        let state = device.storage + "/state.sqlite"
        let backup = try Data(contentsOf: URL(fileURLWithPath: state))
        let done = try await device.run(write)
        try #require(done.status == 0, "\(done.stdout)\(done.stderr)")
        try backup.write(to: URL(fileURLWithPath: state))

        let store = try await device.open()
        #expect(store.initialStatus == .corrupted, "open of a rolled-back state said \(store.initialStatus)")
        #expect(try await !store.verify(full: false).isEmpty)
        let report = try await store.repair()
        #expect(report.status == .ok)
        #expect(try await store.verify(full: true).isEmpty)
        #expect(try await device.open().initialStatus == .ok)
        // The repaired state names the kept manifest's image.
        let kept = try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: device.storage + "/manifest.json")), file: "manifest.json")
        #expect(try await device.open().imageID == kept.imageID)
    }

    @Test func rolledBackStateAfterADownloadIsNotOk() async throws {
        _ = try await offPool { StoreFixture.shared }
        let catalog = StoreFixture.shared.folder.join("catalog/catalog.json")
        try await checkRolledBack(Device(), image: StoreFixture.shared.imageFolder, write: ["download", "europe/li", "--catalog", catalog])
    }

    @Test func rolledBackStateAfterAnUpdateIsNotOk() async throws {
        let fixture = try await UpdateFixture.ready()
        try await checkRolledBack(
            Device(), image: fixture.imageFolder, write: ["update", "--catalog", fixture.catalogPath(UpdateFixture.newVersion)])
    }

    /// The cheap comparison does not cry wolf: a store that was only opened, or moved, opens `ok`.
    @Test func untouchedAndMovedStoresOpenOk() async throws {
        _ = try await offPool { StoreFixture.shared }
        let device = Device()
        _ = try await device.open(image: StoreFixture.shared.image(archive: false))
        #expect(try await device.open().initialStatus == .ok)
        #expect(try await device.open().initialStatus == .ok)
        let moved = device.folder.join("moved")
        let result = try await device.run(["move", "--to", moved])
        try #require(result.status == 0, "\(result.stderr)")
        #expect(try await device.open(storage: moved).initialStatus == .ok)
    }
}
