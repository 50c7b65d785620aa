import Foundation
import MapIO
import MapStore
import TestSupport
import Testing

/// A store's open removes what killed runs left in the storage folder by the rule every staging entry
/// follows (`StagingArea.sweepStale`): an entry whose process is gone goes, one whose process lives stays.
@Suite struct LeftoverSweepTests {
    @Test func openSparesALiveProcessesStagingAndRemovesADeadOnes() async throws {
        let device = Device()
        #expect(try await device.open(image: StoreFixture.shared.image(archive: false)).initialStatus == .ok)
        let finished = ChildProcess("/bin/true", [], timeout: 60)
        try finished.start()
        try finished.wait()
        let living = ChildProcess("/bin/sleep", ["300"], timeout: 300)
        try living.start()
        defer { living.stop() }
        let live = [".staging-\(living.pid)", ".state.sqlite.tmp-\(living.pid)"]
        let dead = [".staging-\(finished.pid)", ".state.sqlite.tmp-\(finished.pid)"]
        for name in live + dead {
            try FileManager.default.createDirectory(atPath: device.storage + "/" + name + "/inside", withIntermediateDirectories: true)
        }
        #expect(try await device.open().initialStatus == .ok)
        let left = Set(try DirectoryWalker.entries(of: device.storage))
        #expect(left.isSuperset(of: live), "a live process's staging was removed: \(left.sorted())")
        #expect(left.isDisjoint(with: dead), "a dead process's staging stayed: \(left.sorted())")
    }
}
