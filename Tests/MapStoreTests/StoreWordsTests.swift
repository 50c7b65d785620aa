import Foundation
import MapFormat
import MapStore
import TestSupport
import Testing

/// `mappack store version` and `update --check` speak a user's words, not the SDKs' (`offline:`,
/// `oldData`) (issue 43, "Terminal").
@Suite struct StoreWordsTests {
    @Test func versionAndUpdateCheckSayWhatTheyMean() async throws {
        let fixture = try await UpdateFixture.ready()
        let device = Device()
        _ = try await device.open(image: fixture.image)
        let version = try await device.run(["version"])
        #expect(version.status == 0, "\(version.stderr)")
        #expect(version.stdout.hasPrefix("map data \(UpdateFixture.oldVersion) (image "), "\(version.stdout)")
        #expect(version.stdout.contains(" regions, catalog ") && version.stdout.contains("; map cache "), "\(version.stdout)")
        #expect(!version.stdout.contains("offline:") && !version.stdout.contains("store="), "\(version.stdout)")

        let check = try await device.run(["update", "--check", "--catalog", fixture.catalogPath(UpdateFixture.newVersion)])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(
            check.stdout.hasPrefix("update available: installed \(UpdateFixture.oldVersion), catalog \(UpdateFixture.newVersion)"), "\(check.stdout)")
        #expect(!check.stdout.contains("oldData"), "\(check.stdout)")
    }
}
