import Foundation
import MapFormat
import MapIO
import MapStore
import TestSupport
import Testing

/// Issue 44 item 2: a region's bytes in an in-place store are in the read-only base, in the storage,
/// or both, and what deleting it frees says so (nothing for the base's).
@Suite struct RegionBytesLocationTests {
    /// Allocated bytes of the regular files under `folder` (block-rounded like the manifest's sizes).
    static func allocated(_ folder: String, blockSize: Int64) throws -> Int64 {
        try DirectoryWalker.walk(folder).filter(\.isRegular).reduce(0) { $0 + ($1.size + blockSize - 1) / blockSize * blockSize }
    }

    @Test func regionsSayWhereTheirBytesAreAndWhatDeletingFrees() async throws {
        let world = try await UpdateFixture.ready()
        let japan = try await CatalogsFixture.ready()
        let server = try NginxServer(root: japan.served)
        defer { server.stop() }
        let device = Device()
        let base = device.folder.join("base")
        try InPlaceCatalogsTests.placeBase(world.imageFolder, at: base)
        let store = try await InPlaceStoreTests.open(device, base: base, catalog: world.catalogURL(UpdateFixture.oldVersion))
        let manifest = try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: base + "/manifest.json")), file: "manifest.json")
        // At the first start every region is read from the base: deleting one frees nothing.
        #expect(try store.regions().allSatisfy { $0.bytesLocation == .base && $0.freedByDeletingInBytes == 0 && $0.sizeOnDiskInBytes > 0 })

        // A downloaded region is the storage's: deleting it frees its size.
        try await store.addCatalog(url: japan.japanURL(CatalogsFixture.japanOld, on: server))
        try await store.download(regions: ["japan/tokyo"]).wait()
        let tokyo = try #require(try store.regions().first { $0.id == "japan/tokyo" })
        #expect(tokyo.bytesLocation == .storage && tokyo.freedByDeletingInBytes == tokyo.sizeOnDiskInBytes && tokyo.sizeOnDiskInBytes > 0)
        #expect(try Self.allocated(device.storage + "/store", blockSize: manifest.blockSize) == tokyo.freedByDeletingInBytes)

        // A repaired base file is read from the storage: its region is in both, and deleting it frees that copy.
        let zh = try #require(manifest.regions.first { $0.id == "europe/ch/zh" })
        let shared = Set(manifest.regions.filter { $0.id != zh.id }.flatMap(\.bundles))
        let victim = try #require(manifest.files.first { zh.bundles.contains($0.bundle) && !shared.contains($0.bundle) && $0.size > 64 })
        try flipBit(in: base + "/store/" + victim.path.string, at: 20)
        #expect(try await store.repair().status == .ok)
        let repaired = try #require(try store.regions().first { $0.id == "europe/ch/zh" })
        #expect(repaired.bytesLocation == .baseAndStorage, "\(repaired)")
        let victimBytes = (victim.size + manifest.blockSize - 1) / manifest.blockSize * manifest.blockSize
        #expect(repaired.freedByDeletingInBytes == victimBytes, "\(repaired)")
        #expect(try store.regions().first { $0.id == "europe/ch/be" }?.bytesLocation == .base)
        // The parent holds both too; its other regions stay the base's.
        #expect(try store.regions().first { $0.id == "europe/ch" }?.bytesLocation == .baseAndStorage)

        // The real binary says the same.
        let listed = try await device.run(["regions", "--json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        var held: [String: (String, Int64)] = [:]
        for line in listed.stdout.split(separator: "\n") {
            let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            held[record["id"] as? String ?? ""] = (
                record["bytesIn"] as? String ?? "", (record["freedByDeletingInBytes"] as? NSNumber)?.int64Value ?? -1
            )
        }
        #expect(held["japan/tokyo"].map { "\($0.0) \($0.1)" } == "storage \(tokyo.freedByDeletingInBytes)")
        #expect(held["europe/ch/be"].map { "\($0.0) \($0.1)" } == "base 0")
        #expect(held["europe/ch/zh"].map { "\($0.0) \($0.1)" } == "baseAndStorage \(victimBytes)")
        let text = try await device.run(["regions"])
        #expect(text.stdout.contains("HELD IN") && text.stdout.contains("base+storage"), "\(text.stdout)")

        // Deleting frees what was said: the storage's copy of the repaired file, then Tokyo.
        let before = try Self.allocated(device.storage + "/store", blockSize: manifest.blockSize)
        try await store.deleteRegions(["europe/ch/zh", "europe/ch/be"])
        #expect(try Self.allocated(device.storage + "/store", blockSize: manifest.blockSize) == before - victimBytes)
        try await store.deleteRegions(["japan/tokyo"])
        #expect(try Self.allocated(device.storage + "/store", blockSize: manifest.blockSize) == 0)

        // A store that copied its image holds every byte in its storage.
        let copied = Device()
        let copy = try await copied.open(image: world.image)
        #expect(try copy.regions().allSatisfy { $0.bytesLocation == .storage })
        let leaf = try #require(try copy.regions().first { $0.id == "europe/ch/zh" })
        #expect(leaf.freedByDeletingInBytes > 0 && leaf.freedByDeletingInBytes <= leaf.sizeOnDiskInBytes)
    }
}
