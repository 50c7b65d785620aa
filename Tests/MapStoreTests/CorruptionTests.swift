import Foundation
import MapFormat
import MapIO
import MapStore
import TestSupport
import Testing

@Suite struct CorruptionTests {
    enum Damage: String, CaseIterable, Sendable { case flipBit, removeFile, addFile }

    @Test(arguments: Damage.allCases, [false, true])
    func fullValidationReportsRegionAndRepairRestoresFromImage(damage: Damage, archive: Bool) async throws {
        let device = Device()
        let image = StoreFixture.shared.image(archive: archive)
        _ = try await device.open(image: image)
        let target = device.storage + "/store/regions/europe/ch/zh/tiles.db"
        switch damage {
        case .flipBit: try flipBit(in: target)
        case .removeFile: try FileManager.default.removeItem(atPath: target)
        case .addFile: try Data("x".utf8).write(to: URL(fileURLWithPath: device.storage + "/store/regions/europe/ch/zh/extra.bin"))
        }
        let store = try await device.open(image: image, full: true)
        #expect(store.initialStatus == .corrupted)
        let problems = try await store.verify(full: true)
        #expect(problems.count == 1)
        if damage != .addFile { #expect(problems.first?.regions == ["europe/ch/zh"]) }
        let report = try await store.repair()
        #expect(report.actions == [damage == .addFile ? .removedFiles(count: 1) : .restoredFiles(count: 1, from: .image)])
        #expect(try await store.verify(full: true).isEmpty)
        #expect(try await device.open(full: true).initialStatus == .ok)
        #expect(store.initialStatus == .corrupted)
    }

    @Test func repairWithoutImageNamesWhatItNeeds() async throws {
        let device = Device()
        _ = try await device.open(image: StoreFixture.shared.image(archive: false))
        try FileManager.default.removeItem(
            atPath: device.storage + "/store/regions/europe/ch/tiles.db".replacingOccurrences(of: "ch/tiles", with: "ch/overview"))
        let store = try await device.open(full: true)
        #expect(store.initialStatus == .corrupted)
        await #expect(throws: MapStoreError.self) { try await store.repair() }
    }
}
