import Foundation
import MapFormat
import MapStore
import Synchronization
import TestSupport
import Testing

/// An update that changes the map version keeps the map cache entries whose region's bundles the new
/// version left unchanged (the same bytes in both versions) and removes the rest, and says what it kept
/// and removed (issue 42 item 2): `StoreEvent.mapCacheReset` before `updateFinished`. Entries no
/// region owns cannot be told unchanged and go. (A seeded image's case runs in `StoreDemoTests`.)
@Suite struct CacheResetTests {
    /// The regions of the old version whose set of bundles `new` lists the same.
    static func unchanged(_ fixture: UpdateFixture, to new: Catalog) throws -> Set<RegionID> {
        let old = try fixture.catalog(UpdateFixture.oldVersion)
        let after = Dictionary(new.regions.map { ($0.id, Set($0.bundles)) }, uniquingKeysWith: { first, _ in first })
        return Set(old.regions.filter { after[$0.id] == Set($0.bundles) }.map(\.id))
    }

    /// Opens the fixture image keeping the old catalog, and stores three entries for each of `regions`
    /// and one that no region owns; returns the store and the event log.
    static func seeded(_ device: Device, _ fixture: UpdateFixture, regions: [RegionID]) async throws -> (MapStore, AutoUpdateTests.EventLog) {
        let store = try await device.open(image: fixture.image, catalog: fixture.catalogURL(UpdateFixture.oldVersion))
        try store.clearCache()
        for region in regions {
            for index in 0..<3 {
                try store.storeCachedData(Data(repeating: UInt8(index), count: 100 + index), for: "\(region)/\(index)", region: region)
            }
        }
        try store.storeCachedData(Data(repeating: 9, count: 50), for: "no-region", region: nil)
        return (store, AutoUpdateTests.EventLog(store.events()))
    }

    func resets(_ log: AutoUpdateTests.EventLog) -> [CacheReset] {
        log.all.compactMap { event -> CacheReset? in
            if case .mapCacheReset(let reset) = event { return reset }
            return nil
        }
    }

    @Test func updateWithNoChangedBundlesKeepsEveryRegionsEntries() async throws {
        let fixture = try await UpdateFixture.ready()
        let next = MapVersion("2026.11.5")
        let catalog = try fixture.writeCatalog(UpdateFixture.oldVersion, as: "same-bundles.json") { $0.mapVersion = next }
        let old = try fixture.catalog(UpdateFixture.oldVersion)
        let regions = Array(old.regions.map(\.id).sorted().prefix(4))
        let device = Device()
        let (store, log) = try await Self.seeded(device, fixture, regions: regions)
        let before = try store.cacheEntryCount()
        try await store.update(catalog: catalog)
        #expect(store.mapVersion == next)
        #expect(try store.cacheEntryCount() == before - 1, "only the entry no region owns goes")
        for region in regions { #expect(try store.cachedData(for: "\(region)/0") != nil, "\(region)") }
        #expect(await eventually(10) { !resets(log).isEmpty })
        let reset = try #require(resets(log).first)
        #expect(reset.keptEntries == before - 1 && reset.removedEntries == 1 && reset.mapVersion == next)
        // The reset names the catalog updated, as does the event (`StoreEvent.catalog`).
        #expect(reset.catalog == "demo-world")
        #expect(log.all.filter { $0.kind == .mapCacheReset }.map(\.catalog) == ["demo-world"])
    }

    @Test func updateKeepsExactlyTheEntriesOfUnchangedRegions() async throws {
        let fixture = try await UpdateFixture.ready()
        let new = try fixture.catalog(UpdateFixture.newVersion)
        let unchanged = try Self.unchanged(fixture, to: new)
        let old = try fixture.catalog(UpdateFixture.oldVersion)
        let changed = old.regions.map(\.id).filter { !unchanged.contains($0) }.sorted()
        try #require(!unchanged.isEmpty && !changed.isEmpty, "the fixture's new version changes some regions and not others")
        let regions = Array(unchanged.sorted().prefix(3)) + Array(changed.prefix(3))
        let device = Device()
        let (store, log) = try await Self.seeded(device, fixture, regions: regions)
        let bytesBefore = try store.computeCacheSize()
        try await store.update(catalog: fixture.catalogURL(UpdateFixture.newVersion))
        for region in regions {
            let kept = try store.cachedData(for: "\(region)/1") != nil
            #expect(kept == unchanged.contains(region), "\(region): kept \(kept)")
        }
        let keptRegions = regions.filter(unchanged.contains).count
        #expect(try store.cacheEntryCount() == 3 * keptRegions)
        #expect(await eventually(10) { log.updateSteps.contains("finished \(UpdateFixture.newVersion)") })
        #expect(resets(log).count == 1)
        let reset = try #require(resets(log).first, "the update changed the cache without a word")
        #expect(reset.keptEntries == 3 * keptRegions && reset.removedEntries == 3 * (regions.count - keptRegions) + 1)
        #expect(reset.keptBytes + reset.removedBytes == bytesBefore && reset.mapVersion == UpdateFixture.newVersion)
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
