import Foundation
import MapIO
import TestSupport
import Testing

@Suite struct StoreCommandTests {
    @Test func storeVerbsDriveAStoreLikeADevice() async throws {
        let device = Device()
        let install = try await device.run(["install", "--image", StoreFixture.shared.imageArchive])
        #expect(install.status == 0, "\(install.stderr)")
        #expect(install.stdout.hasPrefix("ok: "))
        let regions = try await device.run(["regions", "--lang", "fr", "--json"])
        #expect(regions.status == 0)
        #expect(regions.stdout.split(separator: "\n").count == 4)
        #expect(regions.stdout.contains("\"name\":\"Suisse\""))
        #expect(try await device.run(["cache", "size"]).stdout.hasPrefix("7300 bytes"))
        #expect(try await device.run(["cache", "limit", "1000"]).status == 0)
        #expect(try await device.run(["cache", "size"]).stdout.hasPrefix("0 bytes"))
        #expect(try await device.run(["delete", "europe/ch/zh"]).status == 0)
        #expect(try await device.run(["verify"]).status == 0)
        try FileManager.default.removeItem(atPath: device.storage + "/store/regions/europe/ch/be/tiles.db")
        #expect(try await device.run(["status"]).status == 1)
        #expect(try await device.run(["repair", "--image", StoreFixture.shared.imageFolder]).status == 0)
        #expect(try await device.run(["status"]).stdout.hasPrefix("ok: "))
        #expect(try await device.run(["move", "--to", device.folder.join("moved")]).status == 0)
        #expect(try await device.run(["status"]).stdout.hasPrefix("empty: "))
        #expect(try await device.run(["bogus"]).status == 2)
    }
}
