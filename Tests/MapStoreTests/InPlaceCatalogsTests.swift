import Foundation
import MapFormat
import MapIO
import MapStore
import Synchronization
import TestSupport
import Testing

/// Issue 44 item 2 with several catalogs (issue 42): in an in-place store, a catalog the app added and
/// the regions downloaded from it are the device's own, not the base's; a new base (the next system
/// image at the same place) replaces the base's regions only. The base is a plain folder copy of the
/// image (what a mounted partition is to the store: a folder read where it lies), so no mount is needed.
@Suite struct InPlaceCatalogsTests {
    /// The world image of `UpdateFixture` at its new version, built once: the next base.
    final class NewBase: @unchecked Sendable {
        static let shared = NewBase()
        let folder = TemporaryFolder("inplace-new-base")
        var image: String { folder.join("out/ch-\(UpdateFixture.newVersion)") }

        private init() {
            do {
                let world = UpdateFixture.shared
                let recipe = folder.join("new.yaml")
                try Data(
                    "name: ch\ncatalog: \(world.catalogPath(UpdateFixture.newVersion))\nregions:\n  include: [europe/ch]\noutput:\n  formats: [directory]\n"
                        .utf8
                ).write(to: URL(fileURLWithPath: recipe))
                let build = try Tool.mappack(
                    ["build", recipe, "--cache", folder.join("cache"), "--out", folder.join("out")], environment: ["SOURCE_DATE_EPOCH": "1790000000"])
                precondition(build.status == 0, build.stderr)
            } catch {
                preconditionFailure("new base: \(error)")
            }
        }
    }

    /// A fresh device whose base is a copy of the world image, Japan's catalog served by nginx (stop
    /// `server` when done) and the next base, built once.
    struct Scene {
        let world: UpdateFixture
        let japan: CatalogsFixture
        let newBase: NewBase
        let server: NginxServer
        let device = Device()
        var base: String { device.folder.join("base") }

        init() async throws {
            world = try await UpdateFixture.ready()
            japan = try await CatalogsFixture.ready()
            newBase = try await offPool { NewBase.shared }
            server = try NginxServer(root: japan.served)
            do { try InPlaceCatalogsTests.placeBase(world.imageFolder, at: device.folder.join("base")) } catch {
                server.stop()
                throw error
            }
        }
    }

    /// Puts a copy of the image folder `image` at `base`, replacing what was there (a new base mounted at the same place).
    static func placeBase(_ image: String, at base: String) throws {
        try? FileManager.default.removeItem(atPath: base)
        let copy = try Tool.run("/bin/cp", ["-a", image, base], timeout: 120)
        try #require(copy.status == 0, "\(copy.stderr)")
    }

    @Test func aNewBaseKeepsAddedCatalogsAndTheirRegions() async throws {
        let scene = try await Scene()
        defer { scene.server.stop() }
        let (world, japan, newBase, server, device, base) = (scene.world, scene.japan, scene.newBase, scene.server, scene.device, scene.base)
        let worldCatalog = world.catalogURL(UpdateFixture.oldVersion)
        do {
            let store = try await InPlaceStoreTests.open(device, base: base, catalog: worldCatalog)
            try await store.addCatalog(url: japan.japanURL(CatalogsFixture.japanOld, on: server))
            try await store.download(regions: ["japan/tokyo"]).wait()
            #expect(try store.catalogs().map(\.installedRegions).last == ["japan/tokyo"])
        }
        let tokyo = "regions/japan/tokyo/tiles.db"
        let tokyoBytes = try Data(contentsOf: URL(fileURLWithPath: device.storage + "/store/" + tokyo))

        // The next system image brings the world's new version at the same place.
        try Self.placeBase(newBase.image, at: base)
        let store = try await InPlaceStoreTests.open(device, base: base)
        #expect(store.initialStatus == .ok)
        #expect(store.mapVersion == UpdateFixture.newVersion)
        let catalogs = try store.catalogs()
        #expect(catalogs.map(\.id) == ["demo-world", "japan"])
        #expect(catalogs.last?.mapVersion == CatalogsFixture.japanOld && catalogs.last?.installedRegions == ["japan/tokyo"])
        #expect(catalogs.last?.url == japan.japanURL(CatalogsFixture.japanOld, on: server))
        let regions = try store.regions()
        #expect(regions.first { $0.id == "japan/tokyo" }.map { "\($0.mapVersion) \($0.state)" } == "\(CatalogsFixture.japanOld) completed")
        // The base's regions follow the new base.
        let offered = try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: newBase.image + "/manifest.json")), file: "manifest.json")
        #expect(Set(regions.map(\.id)) == Set(offered.regions.map(\.id) + ["japan/tokyo"]))
        #expect(regions.filter { $0.id != "japan/tokyo" }.allSatisfy { $0.mapVersion == UpdateFixture.newVersion && $0.state == .completed })
        // Tokyo is read from the storage, the world from the new base.
        let url = try #require(try store.path(of: tokyo))
        #expect(url.path == device.storageFolder + "/store/" + tokyo)
        #expect(try Data(contentsOf: url) == tokyoBytes)
        let first = try #require(offered.files.first)
        #expect(try store.path(of: first.path)?.path == folderPath(base) + "/store/" + first.path.string)
        #expect(try InPlaceStoreTests.ownFiles(device).allSatisfy { $0.hasPrefix("regions/japan/") })
        #expect(try await store.verify(full: true).isEmpty)
        // Japan is still offered and still updated on its own.
        #expect(try store.availableRegions(catalog: "japan").map(\.id) == ["japan", "japan/osaka"])
        let verify = try await device.run(["verify"])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")

        // A later start finds nothing to take over and the same catalogs.
        let again = try await InPlaceStoreTests.open(device, base: base)
        #expect(again.initialStatus == .ok && again.mapVersion == UpdateFixture.newVersion)
        #expect(try again.catalogs().map(\.installedRegions).last == ["japan/tokyo"])
    }

    /// A new base is taken over also when another process holds the storage at that start: the open
    /// waits for it (the library's hook hears the wait), as a first start does, instead of reading the
    /// store against a base whose files are gone. The other process is `flock(1)` on the storage's
    /// lock file, holding it until its standard input closes, which the hook does.
    @Test func aNewBaseWaitsForAnotherWriterAndIsTakenOver() async throws {
        let scene = try await Scene()
        defer { scene.server.stop() }
        let (world, newBase, device, base) = (scene.world, scene.newBase, scene.device, scene.base)
        _ = try await InPlaceStoreTests.open(device, base: base, catalog: world.catalogURL(UpdateFixture.oldVersion))
        try Self.placeBase(newBase.image, at: base)

        let other = ChildProcess("/usr/bin/flock", [device.storage + "/.lock", "-c", "echo held; cat > /dev/null"], timeout: 600)
        let (input, output) = (Pipe(), Pipe())
        other.process.standardInput = input
        other.process.standardOutput = output
        try other.start()
        defer { other.stop() }
        let said = try await offPool { output.fileHandleForReading.availableData }
        try #require(String(decoding: said, as: UTF8.self).hasPrefix("h"), "flock did not take the lock")

        let waited = Mutex(false)
        let storage = folderPath(device.storage)
        MapStore.waitingForOtherProcess.withLock { hooks in
            hooks["new-base " + storage] = { folder in
                guard folderPath(folder) == storage else { return }
                waited.withLock { $0 = true }
                try? input.fileHandleForWriting.close()
            }
        }
        defer { MapStore.waitingForOtherProcess.withLock { $0["new-base " + storage] = nil } }
        let store = try await InPlaceStoreTests.open(device, base: base)
        #expect(waited.withLock { $0 }, "the open did not wait for the process holding the storage")
        #expect(store.initialStatus == .ok)
        #expect(store.mapVersion == UpdateFixture.newVersion)
        #expect(try await store.verify(full: true).isEmpty)
        try other.wait()
    }

    @Test func commandLineListsAddedCatalogsAfterANewBase() async throws {
        let scene = try await Scene()
        defer { scene.server.stop() }
        let (japan, newBase, server, device, base) = (scene.japan, scene.newBase, scene.server, scene.device, scene.base)
        let install = try await device.run(["install", "--image", base, "--in-place"])
        #expect(install.status == 0, "\(install.stdout) \(install.stderr)")
        let added = try await device.run(["catalogs", "add", japan.japanURL(CatalogsFixture.japanOld, on: server).absoluteString])
        #expect(added.status == 0, "\(added.stdout) \(added.stderr)")
        let download = try await device.run(["download", "japan/tokyo", "--catalog", "japan"])
        #expect(download.status == 0, "\(download.stdout) \(download.stderr)")

        try Self.placeBase(newBase.image, at: base)
        // Any verb that names the base takes the new one over.
        let status = try await device.run(["status", "--image", base, "--in-place"])
        #expect(status.status == 0, "\(status.stdout) \(status.stderr)")
        let listed = try await device.run(["catalogs", "--json"])
        #expect(listed.status == 0, "\(listed.stdout) \(listed.stderr)")
        let records = try listed.stdout.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
        #expect(records.map { $0["id"] as? String } == ["demo-world", "japan"], "\(listed.stdout)")
        #expect(records.first?["mapVersion"] as? String == UpdateFixture.newVersion.rawValue, "\(listed.stdout)")
        #expect(records.last?["installedRegions"] as? Int == 1, "\(listed.stdout)")
        let regions = try await device.run(["regions"])
        #expect(regions.stdout.contains("japan/tokyo"), "\(regions.stdout)")
        let verify = try await device.run(["verify"])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
    }
}

/// The take-over of a new base in a store with an added catalog SIGKILLed at named points of its
/// switch: after `repair()` with the base named, the store is at the new base and Japan and Tokyo are
/// there, whatever the cut.
@Suite struct InPlaceCatalogsCrashTests {
    @Test(arguments: ["newBase.afterMark", "newBase.afterStaging", "newBase.afterNext", "newBase.midSwitch", "newBase.beforeCommit"])
    func killedTakeOverOfANewBaseKeepsTheAddedCatalog(_ point: String) async throws {
        let world = try await UpdateFixture.ready()
        let japan = try await CatalogsFixture.ready()
        let newBase = try await offPool { InPlaceCatalogsTests.NewBase.shared }
        let server = try NginxServer(root: japan.served)
        defer { server.stop() }
        let device = Device()
        let base = device.folder.join("base")
        try InPlaceCatalogsTests.placeBase(world.imageFolder, at: base)
        // Through the binary: no store of this process holds the storage when the next one opens it.
        for step in [
            ["install", "--image", base, "--in-place"], ["catalogs", "add", japan.japanURL(CatalogsFixture.japanOld, on: server).absoluteString],
            ["download", "japan/tokyo", "--catalog", "japan"],
        ] {
            let done = try await device.run(step)
            #expect(done.status == 0, "\(step): \(done.stdout) \(done.stderr)")
        }
        try InPlaceCatalogsTests.placeBase(newBase.image, at: base)
        let killed = try await device.run(["status", "--image", base, "--in-place"], crashAt: point)
        #expect(killed.status == SIGKILL, "\(killed.stdout) \(killed.stderr)")
        let repaired = try await device.run(["repair", "--image", base, "--in-place"])
        #expect(repaired.status == 0, "\(repaired.stdout) \(repaired.stderr)")
        let store = try await InPlaceStoreTests.open(device, base: base)
        #expect(store.initialStatus == .ok)
        #expect(store.mapVersion == UpdateFixture.newVersion)
        #expect(try store.catalogs().map(\.installedRegions).last == ["japan/tokyo"])
        #expect(try store.path(of: "regions/japan/tokyo/tiles.db")?.path == device.storageFolder + "/store/regions/japan/tokyo/tiles.db")
        #expect(try await store.verify(full: true).isEmpty)
    }
}
