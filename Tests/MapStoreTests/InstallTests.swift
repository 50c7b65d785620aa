import Foundation
import MapFormat
import MapIO
import MapStore
import MapVerify
import TestSupport
import Testing

@Suite struct InstallTests {
    @Test(arguments: [false, true])
    func firstStartInstallsImageAndVerifies(archive: Bool) async throws {
        let fixture = StoreFixture.shared
        let device = Device()
        let store = try await device.open(image: fixture.image(archive: archive))
        #expect(store.initialStatus == .ok)
        #expect(store.mapVersion == MapVersion("1.0"))
        #expect(store.imageID == (try fixture.manifest().imageID))
        let regions = try store.regions(language: "fr")
        #expect(regions.map(\.id) == StoreFixture.allRegions)
        #expect(regions.allSatisfy { $0.state == .completed })
        #expect(regions.first { $0.id == "europe/ch" }?.name == "Suisse")
        #expect(try store.regions(language: "de-CH").first { $0.id == "europe/ch/zh" }?.name == "Zürich")
        let manifest = try fixture.manifest()
        for region in regions { #expect(region.sizeOnDiskInBytes == manifest.region(region.id)?.sizeOnDiskInBytes) }
        #expect(try await store.verify(full: true).isEmpty)
        // The library's verifier agrees with the image verifier run on the installed tree.
        #expect(ImageVerifier.verifyTree(device.storage + "/store", manifest: manifest, hashContents: true, jobs: 2).problems.isEmpty)
        #expect(try store.path(of: "regions/europe/ch/zh/tiles.db")?.path == device.storageFolder + "/store/regions/europe/ch/zh/tiles.db")
        #expect(try store.path(of: "../state.sqlite")?.path == nil)
        // A manifest's paths, checked once as `StorePath`s, resolve alike; the text overload is the same call.
        for file in manifest.files.prefix(20) {
            let checked = file.path
            #expect(try store.path(of: checked)?.path == device.storageFolder + "/store/" + file.path.string)
            #expect(try store.path(of: checked) == (try store.path(of: file.path)))
        }
        #expect(throws: StorePath.Problem.climbs) { try StorePath(validating: "../state.sqlite") }
        #expect(try DirectoryWalker.entries(of: device.storage).allSatisfy { !$0.hasPrefix(".staging") })
    }

    @Test func secondStartDoesNothingAndReportsOK() async throws {
        let fixture = StoreFixture.shared
        let device = Device()
        _ = try await device.open(image: fixture.image(archive: false))
        let before = try FileManager.default.attributesOfItem(atPath: device.storage + "/store")[.systemFileNumber] as? Int
        let again = try await device.open(image: fixture.image(archive: false), full: true)
        #expect(again.initialStatus == .ok)
        let after = try FileManager.default.attributesOfItem(atPath: device.storage + "/store")[.systemFileNumber] as? Int
        #expect(before == after)
        #expect(try await again.repair().actions.isEmpty)
    }

    /// An app's every start reads the state database, not the installed files or the kept manifest:
    /// a removed file leaves `initialStatus` ok, and `verify()`, `repair()` and a full-validation open find it.
    @Test func openReadsTheStateAndLeavesFilesToVerifyAndRepair() async throws {
        let device = Device()
        let image = StoreFixture.shared.image(archive: false)
        _ = try await device.open(image: image)
        let removed = "regions/europe/ch/zh/tiles.db"
        try FileManager.default.removeItem(atPath: device.storage + "/store/" + removed)
        let store = try await device.open(image: image)
        #expect(store.initialStatus == .ok)
        #expect(try store.path(of: removed) == nil)
        #expect(try store.path(of: "regions/europe/ch/zh/search.db") != nil)
        let problems = try await store.verify(full: false)
        #expect(problems.map(\.kind) == [.missing], "\(problems)")
        #expect(problems.first?.regions == ["europe/ch/zh"])
        #expect(try await device.open(image: image, full: true).initialStatus == .corrupted)
        #expect(try await store.repair().actions == [.restoredFiles(count: 1, from: .image)])
        #expect(try store.path(of: removed) != nil)
    }

    /// A newer image offered (an app update shipping newer maps) is seen at open without decoding the
    /// image's manifest at every start: its version is remembered with the manifest file's identity.
    @Test func newerImageOfferedIsSeenAtEveryOpenAndOnlyWhileOffered() async throws {
        let device = Device()
        let image = StoreFixture.shared.image(archive: false)
        _ = try await device.open(image: image)
        let newer = device.folder.join("newer")
        try FileManager.default.copyItem(atPath: StoreFixture.shared.imageFolder, toPath: newer)
        let manifestPath = newer + "/manifest.json"
        let text = try String(contentsOfFile: manifestPath, encoding: .utf8)
        #expect(text.contains("\"mapVersion\":\"1.0\""))
        try text.replacingOccurrences(of: "\"mapVersion\":\"1.0\"", with: "\"mapVersion\":\"2.0\"")
            .write(toFile: manifestPath, atomically: true, encoding: .utf8)
        let offered = PreinstalledImage(url: URL(fileURLWithPath: newer))
        #expect(try await device.open(image: offered).initialStatus == .versionMismatch)
        #expect(try await device.open(image: offered).initialStatus == .versionMismatch)
        #expect(try await device.open(image: image).initialStatus == .ok)
        // The same file, rewritten in place with the old version: the remembered version is not reused.
        try text.write(toFile: manifestPath, atomically: false, encoding: .utf8)
        #expect(try await device.open(image: offered).initialStatus == .ok)
    }

    @Test func emptyStorageWithoutImageIsEmpty() async throws {
        let store = try await Device().open()
        #expect(store.initialStatus == .empty)
        #expect(try store.regions().isEmpty)
    }

    @Test func tamperedImageIsRefusedAndLeavesStorageEmpty() async throws {
        let fixture = StoreFixture.shared
        let device = Device()
        let copy = device.folder.join("image")
        try FileManager.default.copyItem(atPath: fixture.imageFolder, toPath: copy)
        try flipBit(in: copy + "/store/regions/europe/ch/zh/tiles.db")
        await #expect(throws: MapStoreError.self) { try await device.open(image: PreinstalledImage(url: URL(fileURLWithPath: copy)), full: true) }
        #expect(try await device.open().initialStatus == .empty)
        try FileManager.default.removeItem(atPath: copy + "/store/regions/europe/ch/zh/search.db")
        await #expect(throws: MapStoreError.self) { try await device.open(image: PreinstalledImage(url: URL(fileURLWithPath: copy))) }
    }

    /// The quick install copies as it checks (issue 34): a file of another size or one the manifest
    /// does not list refuses the image, and nothing of the partial copy is left behind.
    @Test(arguments: ["longer", "extra", "editedManifest"])
    func quickInstallRefusesWhatTheQuickCheckFindsAndLeavesNothing(_ change: String) async throws {
        let fixture = StoreFixture.shared
        let device = Device()
        let copy = device.folder.join("image")
        try FileManager.default.copyItem(atPath: fixture.imageFolder, toPath: copy)
        switch change {
        case "longer":
            let file = try FileHandle(forWritingTo: URL(fileURLWithPath: copy + "/store/regions/europe/ch/zh/tiles.db"))
            try file.seekToEnd()
            try file.write(contentsOf: Data("!".utf8))
            try file.close()
        case "extra":
            try Data("x".utf8).write(to: URL(fileURLWithPath: copy + "/store/regions/europe/ch/zh/zz-extra.bin"))
        default:
            let text = try String(contentsOfFile: copy + "/manifest.json", encoding: .utf8)
            try text.replacingOccurrences(of: "\"name\":\"", with: "\"name\":\"x").write(
                toFile: copy + "/manifest.json", atomically: true, encoding: .utf8)
        }
        await #expect(throws: MapStoreError.self) { try await device.open(image: PreinstalledImage(url: URL(fileURLWithPath: copy))) }
        #expect(try await device.open().initialStatus == .empty)
        #expect(try DirectoryWalker.entries(of: device.storage).allSatisfy { !$0.hasPrefix(".staging") && $0 != "store" })
    }

    @Test func deletingARegionKeepsSharedBundleFiles() async throws {
        let device = Device()
        let store = try await device.open(image: StoreFixture.shared.image(archive: false))
        try await store.deleteRegions(["europe/ch/zh"])
        #expect(try store.regions().map(\.id) == ["europe/ch", "europe/ch/be", "europe/ch/be/thun"])
        #expect(!FileSystem.exists(device.storage + "/store/regions/europe/ch/zh"))
        #expect(FileSystem.exists(device.storage + "/store/borders/be-zh/tiles.db"))
        #expect(try await store.verify(full: true).isEmpty)
        try await store.deleteRegions(["europe/ch/be"])
        #expect(try store.regions().map(\.id) == ["europe/ch"])
        #expect(!FileSystem.exists(device.storage + "/store/borders"))
        #expect(try await store.verify(full: true).isEmpty)
        await #expect(throws: MapStoreError.self) { try await store.deleteRegions(["europe/li"]) }
        #expect(try await device.open().initialStatus == .ok)
    }

    @Test func moveDataMovesEverythingAndReportsProgress() async throws {
        let device = Device()
        let store = try await device.open(image: StoreFixture.shared.image(archive: false))
        let target = device.folder.join("sdcard/maps")
        let last = LockedValue(0.0)
        try await store.moveData(to: URL(fileURLWithPath: target)) { fraction in last.set(fraction) }
        #expect(last.get() == 1)
        #expect(store.storage.path == folderPath(target))
        #expect(!FileSystem.exists(device.storage + "/store"))
        #expect(!FileSystem.exists(device.storage + "/state.sqlite"))
        #expect(try await store.verify(full: true).isEmpty)
        #expect(try await device.open(storage: target).initialStatus == .ok)
        #expect(try await device.open().initialStatus == .empty)
        #expect(!store.mayBeOutOfSpace(for: 1))
        #expect(store.mayBeOutOfSpace(for: Int64.max))
    }
}

/// A value tests can set from a `@Sendable` callback.
final class LockedValue<T: Sendable>: @unchecked Sendable {
    private var value: T
    private let lock = NSLock()
    init(_ value: T) { self.value = value }
    func set(_ new: T) { lock.withLock { value = new } }
    func get() -> T { lock.withLock { value } }
}
