import Foundation
import MapFormat
import MapIO
import TestSupport
import Testing

@testable import MapStore

/// `RegionDetails` as an app's region list shows it, checked against the demo world's catalog.
@Suite struct RegionDetailsTests {
    /// The demo world's catalog of the installed version, decoded here, and a store installed from the
    /// image built from it that keeps that catalog.
    static func store(_ device: Device, catalog name: String? = nil) async throws -> (store: MapStore, catalog: Catalog, manifest: ImageManifest) {
        let fixture = try await UpdateFixture.ready()
        var options = MapStore.Options()
        options.catalogURL = fixture.catalogURL(UpdateFixture.oldVersion)
        let store = try await MapStore.open(storage: device.storageURL, cache: device.cacheURL, preinstalled: fixture.image, options: options)
        var catalog = try fixture.catalog(UpdateFixture.oldVersion)
        if let name {
            let url = URL(fileURLWithPath: fixture.served + "/cat-\(UpdateFixture.oldVersion)/" + name)
            try await store.setCatalogURL(url)
            catalog = try JSONDecoder().decode(Catalog.self, from: Data(contentsOf: url))
        }
        let manifest = try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: fixture.imageFolder + "/manifest.json")), file: "manifest.json")
        return (store, catalog, manifest)
    }

    /// `id` and every catalog region below it, by walking parent links.
    static func subtree(_ id: RegionID, in catalog: Catalog) -> Set<RegionID> {
        var members: Set<RegionID> = [id]
        var grew = true
        while grew {
            grew = false
            for region in catalog.regions where !members.contains(region.id) {
                if let parent = region.parent, members.contains(parent) {
                    members.insert(region.id)
                    grew = true
                }
            }
        }
        return members
    }

    /// A store installed by a library whose state did not record the kept manifest's block size and
    /// catalog name lists the same sizes and version report (read once from the kept manifest).
    @Test func listingsOfAStoreWhoseStateLacksTheManifestFactsAreTheSame() async throws {
        let device = Device()
        let (store, _, _) = try await Self.store(device)
        let available = try store.availableRegions()
        let report = store.versionReport
        #expect(report.contains("catalog=demo-world"), "\(report)")
        try SQLiteDatabase(path: device.storage + "/" + StoreLayout.stateFileName)
            .execute("DELETE FROM meta WHERE key IN ('\(StateMetaKey.blockSize.rawValue)', '\(StateMetaKey.catalogName.rawValue)')")
        let reopened = try await device.open()
        #expect(reopened.initialStatus == .ok)
        #expect(try reopened.availableRegions() == available)
        #expect(reopened.versionReport == report)
    }

    @Test func detailsCarryChildrenPositionReleaseTimeAndBothSizesFromTheCatalog() async throws {
        let device = Device()
        let (store, catalog, manifest) = try await RegionDetailsTests.store(device)
        let onDevice = Set(manifest.bundles.map(\.digest))
        let iso = ISO8601DateFormatter()
        var withChildren = 0
        var notFullyInstalled = 0
        for region in catalog.regions {
            let details = try store.regionDetails(region.id)
            let children = catalog.regions.filter { $0.parent == region.id }.map(\.id).sorted()
            #expect(details.children == children, "\(region.id)")
            if !children.isEmpty { withChildren += 1 }

            let center = try #require(region.center, "the demo world gives every region a centre")
            #expect(details.center == GeoCoordinate(latitude: center[0], longitude: center[1]), "\(region.id)")
            let box = try #require(region.bbox)
            #expect(details.boundingBox?.west == box[0] && details.boundingBox?.south == box[1], "\(region.id)")
            #expect(details.boundingBox?.east == box[2] && details.boundingBox?.north == box[3], "\(region.id)")
            #expect(details.boundingBox.map { $0.contains(details.center!) } == true, "\(region.id)")
            let released = try #require(region.released ?? catalog.released)
            #expect(details.released == iso.date(from: released), "\(region.id): \(released)")

            let bundles = Set(RegionDetailsTests.subtree(region.id, in: catalog).flatMap { id in catalog.regions.first { $0.id == id }!.bundles })
            var onDisk: Int64 = 0
            for digest in bundles { onDisk += try #require(catalog.bundles[digest]?.sizeOnDisk(blockSize: manifest.blockSize)) }
            #expect(details.sizeOnDiskInBytes == onDisk, "\(region.id)")
            #expect(onDisk > 0, "\(region.id)")
            let missing = bundles.subtracting(onDevice).reduce(Int64(0)) { $0 + catalog.bundles[$1]!.size }
            #expect(details.downloadSizeInBytes == missing, "\(region.id)")
            if missing > 0 { notFullyInstalled += 1 }
        }
        #expect(withChildren > 0 && notFullyInstalled > 0, "the demo world should have parents and regions still to download")
        // The list of regions to download says the same.
        for offered in try store.availableRegions() { #expect(offered == (try store.regionDetails(offered.id))) }
    }

    @Test func installedSizeOnDiskMatchesTheFilesOnTheDevice() async throws {
        let device = Device()
        let (store, catalog, manifest) = try await RegionDetailsTests.store(device)
        // Installed regions' catalog size on disk is what their files take on the storage (same block size).
        for row in manifest.regions {
            let bundles = Set(RegionDetailsTests.subtree(row.id, in: catalog).flatMap { id in catalog.regions.first { $0.id == id }!.bundles })
            let files = manifest.files.filter { bundles.contains($0.bundle) }
            let allocated = files.reduce(Int64(0)) { $0 + SizeOnDisk.allocated(size: $1.size, blockSize: manifest.blockSize) }
            #expect(try store.regionDetails(row.id).sizeOnDiskInBytes == allocated, "\(row.id)")
        }
    }

    @Test func unreadableCoordinatesAndTimesAreLeftOutAndOtherISOFormsRead() async throws {
        let fixture = try await UpdateFixture.ready()
        let catalog = try fixture.catalog(UpdateFixture.oldVersion)
        let ids = catalog.regions.map(\.id).sorted()
        try #require(ids.count >= 4)
        let forms: [(released: String, center: [Double], bbox: [Double])] = [
            ("2026-11-20", [91, 0], [170, -10, -170, 10]),
            ("2026-11-20T10:00:00.500Z", [45, 200], [0, 10, 5, 0]),
            ("2026-11-20T11:00:00+01:00", [1, 2, 3], [1, 2, 3]),
            ("20. November 2026", [47, 8], [5, 45, 11, 48]),
        ]
        _ = try fixture.writeCatalog(UpdateFixture.oldVersion, as: "details-forms.json") { catalog in
            for (id, form) in zip(ids, forms) {
                let index = catalog.regions.firstIndex { $0.id == id }!
                catalog.regions[index].released = form.released
                catalog.regions[index].center = form.center
                catalog.regions[index].bbox = form.bbox
            }
        }
        let device = Device()
        let (store, _, _) = try await RegionDetailsTests.store(device, catalog: "details-forms.json")
        let details = try ids.prefix(4).map { try store.regionDetails($0) }
        let utc = { (text: String) in ISO8601DateFormatter().date(from: text) }
        #expect(details[0].released == utc("2026-11-20T00:00:00Z"))
        #expect(details[1].released == utc("2026-11-20T10:00:00Z")!.addingTimeInterval(0.5))
        #expect(details[2].released == utc("2026-11-20T10:00:00Z"))
        #expect(details[3].released == nil)
        // Out of range or not a pair: no centre. A box across the antimeridian is a box; one upside down or short is not.
        #expect(details[0].center == nil && details[1].center == nil && details[2].center == nil)
        #expect(details[3].center == GeoCoordinate(latitude: 47, longitude: 8))
        let across = try #require(details[0].boundingBox)
        #expect(across.contains(GeoCoordinate(latitude: 0, longitude: 179)) && across.contains(GeoCoordinate(latitude: 0, longitude: -175)))
        #expect(!across.contains(GeoCoordinate(latitude: 0, longitude: 0)))
        #expect(details[1].boundingBox == nil && details[2].boundingBox == nil)
        #expect(details[3].boundingBox == GeoBoundingBox(southWest: .init(latitude: 45, longitude: 5), northEast: .init(latitude: 48, longitude: 11)))
    }
}
