import Foundation
import MapFormat
import MapIO
import MapStore
import TestSupport
import Testing

/// `mappack store update` SIGKILLed at every named point: after open + repair the store is at
/// exactly the old or the new version, never a mix, and verifies in full.
@Suite struct UpdateCrashTests {
    static let beforeSwitch = [
        "update.afterFetch", "update.afterMark", "update.midStaging", "update.afterStaging", "update.beforeNext", "update.afterCacheReset",
    ]
    static let afterSwitch = ["update.afterNext", "update.midSwitch", "update.beforeCommit", "update.afterCommit", "update.midPurge"]

    @Test(arguments: beforeSwitch + afterSwitch)
    func killedUpdateEndsAtOldOrNewVersion(_ point: String) async throws {
        let fixture = try await UpdateFixture.ready()
        let device = Device()
        _ = try await device.open(image: fixture.image)
        let result = try await device.run(["update", "--catalog", fixture.catalogPath(UpdateFixture.newVersion)], crashAt: point)
        #expect(result.status == SIGKILL, "\(result.stderr)")
        let store = try await device.open(image: fixture.image)
        _ = try await store.repair()
        let expected = UpdateCrashTests.afterSwitch.contains(point) ? UpdateFixture.newVersion : UpdateFixture.oldVersion
        #expect(store.mapVersion == expected)
        #expect(try await store.verify(full: true).isEmpty)
        let checked = try await MapStore.verifyInstalled(storage: URL(fileURLWithPath: device.storage), full: true)
        #expect(checked.problems.isEmpty, "\(checked.problems)")
        #expect(checked.mapVersion == expected)
        #expect(try store.regions().allSatisfy { $0.mapVersion == expected })
        #expect(try DirectoryWalker.entries(of: device.storage).allSatisfy { !$0.hasPrefix(".staging") && !$0.hasPrefix(".update") })
        #expect(try await device.open(image: fixture.image, full: true).initialStatus == .ok)
        // The interrupted update can always be run to the end afterwards.
        #expect(try await device.run(["update", "--catalog", fixture.catalogPath(UpdateFixture.newVersion)]).status == 0)
        #expect(try await MapStore.verifyInstalled(storage: URL(fileURLWithPath: device.storage), full: true).mapVersion == UpdateFixture.newVersion)
    }

    /// What a power cut during the switch can leave where the filesystem keeps metadata changes out
    /// of order (`make powercut`'s harsh model, update scenario): the readers' copy of the committed
    /// tree (`.update-old/store`, renamed into place without a sync) lost, some of the removal of the
    /// live tree kept, the new tree in `.update-next` whole. There is no committed version left to
    /// show readers, so repair must roll forward without one, not fail on the missing old files.
    @Test func repairRollsForwardWhenThePowerCutLeftTheOldTreeIncomplete() async throws {
        let fixture = try await UpdateFixture.ready()
        let device = Device()
        _ = try await device.open(image: fixture.image)
        let result = try await device.run(["update", "--catalog", fixture.catalogPath(UpdateFixture.newVersion)], crashAt: "update.midSwitch")
        #expect(result.status == SIGKILL, "\(result.stderr)")
        let storage = device.storage
        #expect(FileSystem.isDirectory(storage + "/.update-next/store"))
        // The live tree as the cut left it: part of the old version's files, not all.
        try FileSystem.removeTree(storage + "/.update-old")
        try FileSystem.removeTree(storage + "/store")
        let oldFiles = try DirectoryWalker.walk(fixture.imageFolder + "/store").filter(\.isRegular).map(\.relativePath)
        #expect(oldFiles.count >= 2)
        for file in oldFiles.prefix(oldFiles.count / 2) {
            try FileSystem.makeDirectories(FileSystem.parent(storage + "/store/" + file))
            try FileSystem.copyFile(fixture.imageFolder + "/store/" + file, to: storage + "/store/" + file)
        }
        let store = try await device.open(image: fixture.image)
        _ = try await store.repair()
        #expect(store.mapVersion == UpdateFixture.newVersion)
        let checked = try await MapStore.verifyInstalled(storage: URL(fileURLWithPath: storage), full: true)
        #expect(checked.problems.isEmpty, "\(checked.problems)")
        #expect(checked.mapVersion == UpdateFixture.newVersion)
        #expect(try DirectoryWalker.entries(of: storage).allSatisfy { !$0.hasPrefix(".staging") && !$0.hasPrefix(".update") })
    }
}
