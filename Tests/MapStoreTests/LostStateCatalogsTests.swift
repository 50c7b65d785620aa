import Foundation
import MapFormat
import MapIO
import MapStore
import TestSupport
import Testing

/// Issue 44 item 2's sibling: only `state.sqlite` names the catalogs added to a store (issue 42). When
/// it is lost, `repair()` rebuilds the state from the kept manifest and the files: the regions of the
/// added catalogs stay installed and readable, are reported by id (not listed silently as the image
/// catalog's), and adding their catalog again takes them back.
@Suite struct LostStateCatalogsTests {
    @Test func aLostStateReportsTheRegionsOfAddedCatalogsAndAddingTheCatalogTakesThemBack() async throws {
        let setup = try await CatalogsTests.Setup()
        defer { setup.stop() }
        let store = try await Self.tokyoAddedThenStateLost(setup)
        let report = try await store.repair()
        #expect(report.status == .ok, "\(report)")
        #expect(report.actions.contains(.regionsOfForgottenCatalogs(["japan/tokyo"])), "\(report.actions)")
        #expect(report.actions.map(\.description).joined().contains("catalogs add"), "\(report.actions)")
        // Kept and readable, listed as the image catalog's for now.
        #expect(try store.regions().contains { $0.id == "japan/tokyo" })
        let tokyo = try #require(try store.path(of: "regions/japan/tokyo/tiles.db"))
        #expect(FileManager.default.fileExists(atPath: tokyo.path))
        #expect(try store.catalogs().map(\.id) == ["demo-world"])
        #expect(try await store.verify(full: true).isEmpty)

        // Added again, Japan takes Tokyo back (its data is the catalog's, unchanged).
        let added = try await store.addCatalog(url: setup.japanOld)
        #expect(added.installedRegions == ["japan/tokyo"])
        #expect(try store.catalogs().map(\.installedRegions) == [try store.regions().map(\.id).filter { $0 != "japan/tokyo" }, ["japan/tokyo"]])
        #expect(try store.regions().first { $0.id == "japan/tokyo" }?.mapVersion == CatalogsFixture.japanOld)
        #expect(try await store.verify(full: true).isEmpty)
        // And updates it on its own again.
        let info = try await store.checkForUpdate(catalog: setup.japanNew, in: "japan")
        #expect(info.changedRegions == ["japan/tokyo"])
    }

    /// Japan's newer version offers Tokyo with other data: it does not take the installed Tokyo back
    /// as its own (that would call old data new); the clash names the region.
    @Test func aCatalogOfferingOtherDataDoesNotTakeTheRegionBack() async throws {
        let setup = try await CatalogsTests.Setup()
        defer { setup.stop() }
        let store = try await Self.tokyoAddedThenStateLost(setup)
        _ = try await store.repair()
        await #expect(throws: MapStoreError.self) { try await store.addCatalog(url: setup.japanNew) }
        #expect(try store.catalogs().map(\.id) == ["demo-world"])
    }

    /// Adds Japan's catalog to the setup's store, downloads Tokyo, deletes `state.sqlite` and opens
    /// the store again (not yet repaired).
    static func tokyoAddedThenStateLost(_ setup: CatalogsTests.Setup) async throws -> MapStore {
        do {
            let store = try await setup.open()
            try await store.addCatalog(url: setup.japanOld)
            try await store.download(regions: ["japan/tokyo"]).wait()
        }
        try FileManager.default.removeItem(atPath: setup.device.storage + "/state.sqlite")
        return try await setup.device.open(image: setup.world.image)
    }
}
