import Foundation
import MapFormat
import MapIO
import MapStore
import TestSupport
import Testing

@Suite struct CacheTests {
    @Test func seedIsImportedAtFirstStart() async throws {
        let store = try await Device().open(image: StoreFixture.shared.image(archive: true))
        #expect(try store.cacheEntryCount() == 2)
        #expect(try store.computeCacheSize() == 7300)
        #expect(try store.cachedData(for: "overview/world/tiles.db") == SourceFixture.bytes(7000, seed: "overview/world/tiles.db"))
    }

    @Test func limitEvictsLeastRecentlyUsedFirst() async throws {
        let store = try await Device().open(image: StoreFixture.shared.image(archive: false))
        try store.clearCache()
        for key in ["a", "b", "c"] { try store.storeCachedData(Data(repeating: 1, count: 100), for: key) }
        _ = try store.cachedData(for: "a")
        try store.setCacheLimit(250)
        #expect(try store.cachedData(for: "b") == nil)
        #expect(try store.cachedData(for: "a") != nil)
        #expect(try store.cachedData(for: "c") != nil)
        try store.storeCachedData(Data(repeating: 2, count: 100), for: "d")
        // "a" was read before "c", so "a" goes next.
        #expect(try store.cachedData(for: "a") == nil)
        #expect(try store.computeCacheSize() == 200)
        #expect(try store.cacheLimit() == 250)
    }

    @Test func seedEntriesAreEvictedBeforeUsedOnes() async throws {
        let device = Device()
        let store = try await device.open(image: StoreFixture.shared.image(archive: false))
        try store.storeCachedData(Data(repeating: 3, count: 10), for: "used")
        try store.setCacheLimit(7010)
        #expect(try store.cachedData(for: "used") != nil)
        #expect(try store.cachedData(for: "overview/world/names.txt") == nil)
    }

    @Test func clearCacheNeverTouchesPersistentStorage() async throws {
        let device = Device()
        let store = try await device.open(image: StoreFixture.shared.image(archive: false))
        try store.clearCache()
        #expect(try store.computeCacheSize() == 0)
        #expect(try store.regions().count == 4)
        #expect(try await store.verify(full: true).isEmpty)
        #expect(try await device.open().initialStatus == .ok)
    }

    @Test func seedOlderThanStoreIsRefused() async throws {
        let device = Device()
        let store = try await device.open(image: StoreFixture.shared.image(archive: false))
        try store.clearCache()
        let old = device.folder.join("old-seed.sqlite")
        try FileManager.default.copyItem(atPath: StoreFixture.shared.imageFolder + "/cache-seed.sqlite", toPath: old)
        do {
            let db = try SQLiteDatabase(path: old)
            try db.query("UPDATE meta SET value = '0.9' WHERE key = ?", [.text(CacheSchema.MetaKey.mapVersion.rawValue)])
        }
        await #expect {
            try await store.importCacheSeed(at: URL(fileURLWithPath: old))
        } throws: { error in
            guard case MapStoreError.seedOlderThanStore(let seed, _) = error else { return false }
            return seed == MapVersion("0.9")
        }
        #expect(try store.computeCacheSize() == 0)
        #expect(try await store.importCacheSeed(at: URL(fileURLWithPath: StoreFixture.shared.imageFolder + "/cache-seed.sqlite")) == 2)
    }

    @Test func seedImportInACancelledTaskSaysCancelledAndImportsNothing() async throws {
        let device = Device()
        let store = try await device.open(image: StoreFixture.shared.image(archive: false))
        try store.clearCache()
        let seed = URL(fileURLWithPath: StoreFixture.shared.imageFolder + "/cache-seed.sqlite")
        let importing = Task {
            // Sleeps until cancelled, then imports from the cancelled task.
            try? await Task.sleep(for: .seconds(60))
            return try await store.importCacheSeed(at: seed)
        }
        importing.cancel()
        let outcome = await importing.result
        #expect(cancelled(outcome), "\(outcome)")
        #expect(try store.cacheEntryCount() == 0)
        #expect(try await store.importCacheSeed(at: seed) == 2)
    }
}
