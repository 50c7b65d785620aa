import Foundation
import MapFormat
import MapStore
import Synchronization
import TestSupport
import Testing

/// An update that changes the map version empties the map cache, the image's cache seed included, and
/// says so (issue 31): `StoreEvent.mapCacheReset` with what went, before `updateFinished`. (A seeded image's
/// case runs in `StoreDemoTests`.)
@Suite struct CacheResetTests {
    @Test func updateThatEmptiesTheCacheSaysWhatItRemoved() async throws {
        let fixture = try await UpdateFixture.ready()
        let device = Device()
        let store = try await device.open(image: fixture.image)
        for index in 0..<3 { try store.storeCachedData(Data(repeating: UInt8(index), count: 100 + index), for: "tile-\(index)", region: "europe/ch") }
        let seeded = try store.cacheEntryCount()
        try #require(seeded >= 3)
        let seededBytes = try store.computeCacheSize()
        let log = AutoUpdateTests.EventLog(store.events())
        try await store.update(catalog: fixture.catalogURL(UpdateFixture.newVersion))
        #expect(try store.cacheEntryCount() == 0)
        #expect(await eventually(10) { log.updateSteps.contains("finished \(UpdateFixture.newVersion)") })
        let resets = log.all.compactMap { event -> CacheReset? in
            if case .mapCacheReset(let reset) = event { return reset }
            return nil
        }
        #expect(resets.count == 1)
        let reset = try #require(resets.first, "the update emptied the cache without a word")
        #expect(reset.removedEntries == seeded && reset.removedBytes == seededBytes && reset.mapVersion == UpdateFixture.newVersion)
        let order = log.all.compactMap { event -> String? in
            switch event {
            case .mapCacheReset: "cache"
            case .updateFinished: "finished"
            default: nil
            }
        }
        #expect(order == ["cache", "finished"])
    }
}
