import Foundation
import MapFormat
import MapIO
import MapStore
import TestSupport
import Testing

/// Issue 44 item 2: stores whose base is a read-only image folder used where it lies (a mounted
/// `.erofs` partition image): the first start writes only the state database, the base's files are
/// read in place, and everything that changes later is written to the storage folder and wins.
@Suite(
    .enabled(
        if: LoopMount.canMount && FileManager.default.isExecutableFile(atPath: "/usr/bin/mkfs.erofs"),
        "mounting a partition image needs root and Debian's erofs-utils (make deps)"))
struct InPlaceStoreTests {
    /// `folder` made into an erofs partition image (`mkfs.erofs`) and loop-mounted read-only at `point`.
    static func mountedBase(of folder: String, image: String, at point: String) throws -> LoopMount {
        try? FileManager.default.removeItem(atPath: image)
        let made = try Tool.run("/usr/bin/mkfs.erofs", ["--quiet", image, folder], timeout: 300)
        try #require(made.status == 0, "mkfs.erofs: \(made.stderr)")
        return try LoopMount(image: image, at: point, type: "erofs", options: ["ro"])
    }

    /// Opens `device`'s store in place on the image folder `base`.
    static func open(_ device: Device, base: String, catalog: URL? = nil) async throws -> MapStore {
        try await MapStore.open(
            storage: device.storageURL, cache: device.cacheURL, preinstalled: PreinstalledImage(url: URL(fileURLWithPath: base)),
            options: .init(catalogURL: catalog, useImageInPlace: true))
    }

    /// A copy of the fixture's image in `device`'s folder whose manifest text `edit` changed (given the
    /// manifest's first file), its id sealed again over the edited bytes; returns the copy's folder, the
    /// fixture's manifest, that file, and the new id.
    static func editedBase(
        _ device: Device, _ edit: (String, ImageFile) throws -> String
    ) async throws -> (folder: String, manifest: ImageManifest, file: ImageFile, id: String) {
        let fixture = try await offPool { StoreFixture.shared }
        let copy = device.folder.join("image")
        try FileManager.default.copyItem(atPath: fixture.imageFolder, toPath: copy)
        let manifestURL = URL(fileURLWithPath: copy + "/manifest.json")
        let manifest = try fixture.manifest()
        let file = try #require(manifest.files.first)
        let text = try edit(String(decoding: try Data(contentsOf: manifestURL), as: UTF8.self), file)
        let blanked = text.replacingOccurrences(of: "\"imageID\":\"\(manifest.imageID)\"", with: "\"imageID\":\"\"")
        let id = SHA256.hex(Data(blanked.utf8))
        try Data(blanked.replacingOccurrences(of: "\"imageID\":\"\"", with: "\"imageID\":\"\(id)\"").utf8).write(to: manifestURL)
        return (copy, manifest, file, id)
    }

    /// Regular files in the storage's `store/` folder, by store path.
    static func ownFiles(_ device: Device) throws -> [String] {
        try DirectoryWalker.walk(device.storage + "/store").filter(\.isRegular).map(\.relativePath)
    }

    /// Bytes of the regular files in the storage folder.
    static func storageBytes(_ device: Device) throws -> Int64 {
        try DirectoryWalker.walk(device.storage).filter(\.isRegular).reduce(0) { $0 + $1.size }
    }

    @Test func firstStartInPlaceCopiesNothingAndReadsTheMountedImage() async throws {
        let fixture = try await offPool { StoreFixture.shared }
        let device = Device()
        let mount = try Self.mountedBase(of: fixture.imageFolder, image: device.folder.join("base.erofs"), at: device.folder.join("mnt"))
        defer { mount.unmount() }
        let store = try await Self.open(device, base: mount.point)
        #expect(store.initialStatus == .ok)
        #expect(try store.regions().map(\.id) == StoreFixture.allRegions)
        #expect(store.mapVersion == MapVersion("1.0"))
        // Nothing of the image was copied or linked: the state database and an empty store folder.
        #expect(try Self.ownFiles(device).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: device.storage + "/manifest.json"))
        #expect(try Self.storageBytes(device) <= 1 << 20)
        let manifest = try fixture.manifest()
        #expect(!manifest.files.isEmpty)
        for file in manifest.files {
            let url = try #require(try store.path(of: file.path), "\(file.path)")
            #expect(url.path == folderPath(mount.point) + "/store/" + file.path.string)
            #expect(try Data(contentsOf: url) == Data(contentsOf: URL(fileURLWithPath: fixture.imageFolder + "/store/" + file.path.string)))
        }
        #expect(try store.path(of: "no/such/file.db") == nil)
        #expect(try await store.verify(full: true).isEmpty)
        let checked = try await MapStore.verifyInstalled(storage: device.storageURL, full: true)
        #expect(checked.problems.isEmpty && checked.imageID == manifest.imageID)

        // A later start opens from the state alone, again at the base.
        let again = try await Self.open(device, base: mount.point)
        #expect(again.initialStatus == .ok && again.imageID == manifest.imageID)
        #expect(try again.path(of: manifest.files[0].path)?.path == folderPath(mount.point) + "/store/" + manifest.files[0].path.string)
        #expect(try Self.ownFiles(device).isEmpty)

        // The real binary sees the same store.
        let status = try await device.run(["status", "--full"])
        #expect(status.status == 0, "\(status.stdout) \(status.stderr)")
        let regions = try await device.run(["regions"])
        #expect(regions.status == 0 && regions.stdout.contains("europe/ch/zh"), "\(regions.stdout) \(regions.stderr)")
        let verify = try await offPool { try Tool.mappack(["verify", device.storage]) }
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
    }

    /// The first start in place reads the manifest without decoding it in full (without its file list);
    /// it still refuses what the full reading refused (an edited manifest or file list, whose id no longer
    /// matches; one cut short), and leaves the storage empty.
    @Test(arguments: ["editedManifest", "editedFileList", "cutShort"])
    func firstStartInPlaceRefusesABadManifestAndLeavesNothing(_ change: String) async throws {
        let fixture = try await offPool { StoreFixture.shared }
        let device = Device()
        let copy = device.folder.join("image")
        try FileManager.default.copyItem(atPath: fixture.imageFolder, toPath: copy)
        let manifest = copy + "/manifest.json"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: manifest))
        switch change {
        case "editedManifest":
            let text = String(decoding: bytes, as: UTF8.self)
            try Data(text.replacingOccurrences(of: "\"name\":\"", with: "\"name\":\"x").utf8).write(to: URL(fileURLWithPath: manifest))
        case "editedFileList":
            // One byte of the file list, which the first start skips but hashes for the id.
            let text = String(decoding: bytes, as: UTF8.self)
            let path = try #require(try fixture.manifest().files.first?.path.string)
            try #require(text.contains("\"path\":\"\(path)\""))
            let edited = text.replacingOccurrences(of: "\"path\":\"\(path)\"", with: "\"path\":\"\(path)x\"")
            try Data(edited.utf8).write(to: URL(fileURLWithPath: manifest))
        default:
            try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: manifest))
        }
        await #expect(throws: MapStoreError.self) { try await Self.open(device, base: copy) }
        #expect(!FileManager.default.fileExists(atPath: device.storage + "/store"))
        #expect(try await device.open().initialStatus == .empty)
    }

    /// The first start hashes the manifest for its id on a second thread, taking the first `"imageID":"`
    /// for the id's field; when that is another member (a decoy in a bundle, which readers skip), the
    /// reader hashes the bytes itself and the image, whose id is right, is installed as before. A
    /// decoy in an image whose id is wrong is refused.
    @Test(arguments: [true, false])
    func firstStartInPlaceFindsTheIDFieldPastADecoy(_ rightID: Bool) async throws {
        let fixture = try await offPool { StoreFixture.shared }
        let device = Device()
        let copy = device.folder.join("image")
        try FileManager.default.copyItem(atPath: fixture.imageFolder, toPath: copy)
        let manifestURL = URL(fileURLWithPath: copy + "/manifest.json")
        let manifest = try fixture.manifest()
        var text = String(decoding: try Data(contentsOf: manifestURL), as: UTF8.self)
        let opening = "\"bundles\":[{"
        try #require(text.contains(opening))
        text = text.replacingOccurrences(of: opening, with: opening + "\"imageID\":\"decoy\",")
        let field = "\"imageID\":\"\(manifest.imageID)\""
        let blanked = text.replacingOccurrences(of: field, with: "\"imageID\":\"\"")
        let id = rightID ? SHA256.hex(Data(blanked.utf8)) : String(repeating: "0", count: 64)
        try Data(blanked.replacingOccurrences(of: "\"imageID\":\"\"", with: "\"imageID\":\"\(id)\"").utf8).write(to: manifestURL)
        if rightID {
            let store = try await Self.open(device, base: copy)
            #expect(store.initialStatus == .ok)
            #expect(store.imageID == id)
            #expect(try store.regions().count == manifest.regions.count)
        } else {
            await #expect(throws: MapStoreError.self) { try await Self.open(device, base: copy) }
            #expect(try await device.open().initialStatus == .empty)
        }
    }

    /// The first start reads no file of the base, so it checks the manifest's header, regions, sizes
    /// and id but not its entries' paths (for 10⁵ files that was most of its time): they are checked
    /// where they are used. A base whose list names a path leaving the store (its id made right) opens;
    /// `verify()` and deleting the region read the list whole and refuse it, and nothing outside the
    /// storage folder is touched.
    @Test func aBaseWithABadPathOpensAndIsRefusedWhereItsListIsRead() async throws {
        let device = Device()
        let (copy, manifest, victim, id) = try await Self.editedBase(device) { text, victim in
            let pathField = "\"path\":\"\(victim.path.string)\""
            try #require(text.contains(pathField))
            return text.replacingOccurrences(of: pathField, with: "\"path\":\"../../escape\"")
        }
        let owner = try #require(manifest.regions.first { $0.bundles.contains(victim.bundle) })

        let store = try await Self.open(device, base: copy)
        #expect(store.initialStatus == .ok)
        #expect(store.imageID == id)
        do {
            let problems = try await store.verify(full: false)
            #expect(!problems.isEmpty, "verify() took a manifest that lists '../../escape'")
        } catch {}
        await #expect(throws: MapStoreError.self) { try await store.deleteRegions([owner.id]) }
        #expect(!FileManager.default.fileExists(atPath: device.folder.join("escape")))
        #expect(!FileManager.default.fileExists(atPath: device.storage + "/../escape"))
    }

    /// Issue 44: the first start reads its readers' snapshot from the rows it writes, inside the commit
    /// (while the manifest's id hash ends), not from the committed state afterwards: what the store then
    /// says is what a later open reads.
    /// After it, what changes the state before `open` returns (the image's cache seed imported, a catalog
    /// URL remembered) shows too: the catalog URL is there, and a download is not refused as if the
    /// seed's import were still pending.
    @Test func theFirstStartSaysWhatALaterOpenReads() async throws {
        let fixture = try await offPool { StoreFixture.shared }
        let device = Device()
        let catalog = URL(string: "http://127.0.0.1:9/catalog.json")!
        let first = try await Self.open(device, base: fixture.imageFolder, catalog: catalog)
        #expect(first.initialStatus == .ok)
        #expect(first.catalogURL == catalog)
        #expect(try fixture.manifest().cacheSeed != nil)
        // Whatever a region's details need beyond the store, the store itself does not read as needing a repair.
        do {
            _ = try first.regionDetails("europe/ch/zh")
        } catch {
            if case .repairNeeded = error { Issue.record("the first start's store reads as needing a repair: \(error)") }
        }
        let later = try await Self.open(device, base: fixture.imageFolder, catalog: catalog)
        #expect(try first.regions() == later.regions())
        #expect(try first.regions(language: "de") == later.regions(language: "de"))
        #expect(try first.regions().count == fixture.manifest().regions.count)
        #expect(first.mapVersion == later.mapVersion && first.imageID == later.imageID)
    }

    /// Issue 44: the first start skips the base's file list (its id's hash covers every byte of it), so a
    /// list whose sizes disagree with the regions' (its id made right) opens, and `verify()`, which reads
    /// the list whole, names the disagreement.
    @Test func aBaseWhoseListDisagreesWithItsSizesOpensAndVerifyNamesIt() async throws {
        let device = Device()
        let (copy, _, victim, id) = try await Self.editedBase(device) { text, victim in
            let entryEnd = "\"path\":\"\(victim.path.string)\",\"sha256\":\"\(victim.sha256.hex)\",\"size\":\(victim.size)}"
            try #require(text.contains(entryEnd))
            return text.replacingOccurrences(of: entryEnd, with: entryEnd.dropLast() + "0000}")
        }

        let store = try await Self.open(device, base: copy)
        #expect(store.initialStatus == .ok)
        #expect(store.imageID == id)
        let problems = try await store.verify(full: false)
        // The regions holding the file (their sizes no longer sum up), and the file (not the size listed).
        #expect(problems.contains { $0.kind == .sizeOnDiskMismatch }, "\(problems)")
        #expect(problems.contains { $0.kind == .sizeMismatch && $0.path == victim.path.string }, "\(problems)")
    }

    @Test func commandLineInstallsInPlaceFromTheMount() async throws {
        let fixture = try await offPool { StoreFixture.shared }
        let device = Device()
        let mount = try Self.mountedBase(of: fixture.imageFolder, image: device.folder.join("base.erofs"), at: device.folder.join("mnt"))
        defer { mount.unmount() }
        let install = try await device.run(["install", "--image", mount.point, "--in-place"])
        #expect(install.status == 0, "\(install.stdout) \(install.stderr)")
        #expect(try Self.ownFiles(device).isEmpty)
        #expect(try Self.storageBytes(device) <= 1 << 20)
        let verify = try await device.run(["verify"])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
        let regions = try await device.run(["regions"])
        #expect(regions.stdout.contains("europe/ch/be/thun"), "\(regions.stdout)")
        // A packed image cannot be used in place: bad input, naming it.
        let other = Device()
        let packed = try await other.run(["install", "--image", fixture.imageArchive, "--in-place"])
        #expect(packed.status == 2, "\(packed.stdout) \(packed.stderr)")
        #expect(packed.stderr.contains("in place"), "\(packed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: other.storage + "/state.sqlite"))
    }

    @Test func downloadsLandInStorageAndDeletedBaseRegionsAreHidden() async throws {
        let fixture = try await offPool { StoreFixture.shared }
        let device = Device()
        let mount = try Self.mountedBase(of: fixture.imageFolder, image: device.folder.join("base.erofs"), at: device.folder.join("mnt"))
        defer { mount.unmount() }
        let catalog = URL(fileURLWithPath: fixture.folder.join("catalog/catalog.json"))
        let store = try await Self.open(device, base: mount.point, catalog: catalog)
        try await store.download(regions: ["europe/li"]).wait()
        #expect(try store.regions().map(\.id).contains("europe/li"))
        let own = try Self.ownFiles(device)
        #expect(!own.isEmpty)
        for path in own { #expect(try store.path(of: path)?.path == device.storageFolder + "/store/" + path) }
        let manifest = try fixture.manifest()
        #expect(try store.path(of: manifest.files[0].path)?.path == folderPath(mount.point) + "/store/" + manifest.files[0].path.string)
        #expect(try await store.verify(full: true).isEmpty)

        // Deleting a base region hides its files; their bytes stay in the read-only base.
        let zh = try #require(manifest.regions.first { $0.id == "europe/ch/zh" })
        let shared = Set(manifest.regions.filter { $0.id != zh.id }.flatMap(\.bundles))
        let zhFiles = manifest.files.filter { zh.bundles.contains($0.bundle) && !shared.contains($0.bundle) }
        #expect(!zhFiles.isEmpty)
        try await store.deleteRegions(["europe/ch/zh"])
        #expect(!(try store.regions().map(\.id).contains("europe/ch/zh")))
        for file in zhFiles {
            #expect(try store.path(of: file.path) == nil, "\(file.path)")
            #expect(FileManager.default.fileExists(atPath: folderPath(mount.point) + "/store/" + file.path.string))
        }
        #expect(try await store.verify(full: true).isEmpty)
        let reopened = try await Self.open(device, base: mount.point, catalog: catalog)
        #expect(reopened.initialStatus == .ok)
        #expect(try reopened.path(of: zhFiles[0].path) == nil)
        #expect(try await reopened.verify(full: true).isEmpty)

        // Downloaded again, it is read from the base again (the base holds the same bytes).
        try await reopened.download(regions: ["europe/ch/zh"]).wait()
        for file in zhFiles { #expect(try reopened.path(of: file.path)?.path == folderPath(mount.point) + "/store/" + file.path.string) }
        #expect(try await reopened.verify(full: true).isEmpty)
        let verify = try await device.run(["verify"])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")

        // A move takes the storage's own files and markers along; the base stays where it is.
        try await reopened.deleteRegions(["europe/ch/zh"])
        let moved = device.folder.join("moved")
        try await reopened.moveData(to: URL(fileURLWithPath: moved, isDirectory: true))
        #expect(try reopened.path(of: zhFiles[0].path) == nil)
        #expect(try reopened.path(of: own[0])?.path == folderPath(moved) + "/store/" + own[0])
        #expect(try reopened.path(of: manifest.files[0].path)?.path == folderPath(mount.point) + "/store/" + manifest.files[0].path.string)
        #expect(reopened.baseImage?.path == folderPath(mount.point))
        #expect(try await reopened.verify(full: true).isEmpty)
    }

    @Test func aDamagedBaseFileIsRepairedIntoStorage() async throws {
        let fixture = try await offPool { StoreFixture.shared }
        let device = Device()
        // A plain folder copy of the image stands in for the partition (erofs cannot be damaged in place).
        let base = device.folder.join("base")
        let copy = try Tool.run("/bin/cp", ["-a", fixture.imageFolder, base], timeout: 120)
        #expect(copy.status == 0, "\(copy.stderr)")
        let catalog = URL(fileURLWithPath: fixture.folder.join("catalog/catalog.json"))
        let store = try await Self.open(device, base: base, catalog: catalog)
        let manifest = try fixture.manifest()
        let victim = try #require(manifest.files.first { $0.size > 64 })
        try flipBit(in: base + "/store/" + victim.path.string, at: 20)
        let problems = try await store.verify(full: true)
        #expect(problems.map(\.path) == [victim.path.string], "\(problems)")
        let report = try await store.repair()
        #expect(report.status == .ok, "\(report)")
        #expect(try Self.ownFiles(device) == [victim.path.string])
        let url = try #require(try store.path(of: victim.path))
        #expect(url.path == device.storageFolder + "/store/" + victim.path.string)
        #expect(try SHA256.digestOfFile(url.path).0 == victim.sha256)
        #expect(try await store.verify(full: true).isEmpty)
        let verify = try await device.run(["verify"])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
    }

    @Test func aFactoryResetFallsBackToTheBase() async throws {
        let fixture = try await offPool { StoreFixture.shared }
        let device = Device()
        let mount = try Self.mountedBase(of: fixture.imageFolder, image: device.folder.join("base.erofs"), at: device.folder.join("mnt"))
        defer { mount.unmount() }
        let catalog = URL(fileURLWithPath: fixture.folder.join("catalog/catalog.json"))
        do {
            let store = try await Self.open(device, base: mount.point, catalog: catalog)
            try await store.download(regions: ["europe/li"]).wait()
            try await store.deleteRegions(["europe/ch/zh"])
        }
        // The storage folder wiped (a factory reset): the next start is a first start on the base.
        try FileManager.default.removeItem(atPath: device.storage)
        let store = try await Self.open(device, base: mount.point, catalog: catalog)
        #expect(store.initialStatus == .ok)
        #expect(try store.regions().map(\.id) == StoreFixture.allRegions)
        #expect(try Self.ownFiles(device).isEmpty)
        #expect(try await store.verify(full: true).isEmpty)
    }

    @Test func updatesWriteChangedFilesAndANewBaseIsTakenOver() async throws {
        let fixture = try await UpdateFixture.ready()
        let device = Device()
        let point = device.folder.join("mnt")
        var mount = try Self.mountedBase(of: fixture.imageFolder, image: device.folder.join("old.erofs"), at: point)
        defer { mount.unmount() }
        let old = try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: fixture.imageFolder + "/manifest.json")), file: "manifest.json")
        let bystander = Device()
        do {
            let store = try await Self.open(device, base: point)
            _ = try await Self.open(bystander, base: point)
            try await store.update(catalog: fixture.catalogURL(UpdateFixture.newVersion))
            #expect(store.mapVersion == UpdateFixture.newVersion)
            // Only files whose bytes the base does not hold were written to the storage.
            let kept = try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: device.storage + "/manifest.json")), file: "manifest.json")
            let oldFiles = Dictionary(old.files.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
            let changed = kept.files.filter { oldFiles[$0.path]?.sha256 != $0.sha256 }.map(\.path.string).sorted()
            #expect(!changed.isEmpty)
            #expect(try Self.ownFiles(device) == changed)
            let same = try #require(kept.files.first { oldFiles[$0.path]?.sha256 == $0.sha256 })
            #expect(try store.path(of: same.path)?.path == folderPath(point) + "/store/" + same.path.string)
            #expect(try store.path(of: changed[0])?.path == device.storageFolder + "/store/" + changed[0])
            #expect(try await store.verify(full: true).isEmpty)
        }
        let verify = try await device.run(["verify"])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")

        // The next system image brings the new version at the same place: the updated device's copies are
        // stale and go; the device that never updated follows the base.
        let recipe = device.folder.join("new.yaml")
        try Data(
            "name: ch\ncatalog: \(fixture.catalogPath(UpdateFixture.newVersion))\nregions:\n  include: [europe/ch]\noutput:\n  formats: [directory]\n"
                .utf8
        ).write(to: URL(fileURLWithPath: recipe))
        let build = try await offPool {
            try Tool.mappack(
                ["build", recipe, "--cache", device.folder.join("cache-build"), "--out", device.folder.join("new")],
                environment: ["SOURCE_DATE_EPOCH": "1790000000"])
        }
        #expect(build.status == 0, "\(build.stderr)")
        mount.unmount()
        mount = try Self.mountedBase(of: device.folder.join("new/ch-\(UpdateFixture.newVersion)"), image: device.folder.join("new.erofs"), at: point)
        for each in [device, bystander] {
            let store = try await Self.open(each, base: point)
            #expect(store.initialStatus == .ok)
            #expect(store.mapVersion == UpdateFixture.newVersion)
            #expect(try Self.ownFiles(each).isEmpty)
            #expect(!FileManager.default.fileExists(atPath: each.storage + "/manifest.json"))
            #expect(try await store.verify(full: true).isEmpty)
            let files = try await offPool { try Tool.mappack(["verify", each.storage]) }
            #expect(files.status == 0, "\(files.stdout) \(files.stderr)")
        }

        // A device updated past its base keeps its own files when the base changes under it.
        let ahead = Device()
        mount.unmount()
        mount = try Self.mountedBase(of: fixture.imageFolder, image: device.folder.join("old.erofs"), at: point)
        do {
            let store = try await Self.open(ahead, base: point)
            try await store.update(catalog: fixture.catalogURL(UpdateFixture.newVersion))
        }
        let before = try Self.ownFiles(ahead)
        // The old version again, built under another name: another base image, behind the device.
        let rebuilt = device.folder.join("old-again")
        let renamed = device.folder.join("again.yaml")
        try Data(
            "name: again\ncatalog: \(fixture.catalogPath(UpdateFixture.oldVersion))\nregions:\n  include: [europe/ch]\noutput:\n  formats: [directory]\n"
                .utf8
        ).write(to: URL(fileURLWithPath: renamed))
        let again = try await offPool {
            try Tool.mappack(
                ["build", renamed, "--cache", device.folder.join("cache-build"), "--out", rebuilt], environment: ["SOURCE_DATE_EPOCH": "1790000000"])
        }
        #expect(again.status == 0, "\(again.stderr)")
        let olderBase = rebuilt + "/again-\(UpdateFixture.oldVersion)"
        let olderID = try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: olderBase + "/manifest.json")), file: "manifest.json").imageID
        #expect(olderID != old.imageID)
        mount.unmount()
        mount = try Self.mountedBase(of: olderBase, image: device.folder.join("old2.erofs"), at: point)
        let store = try await Self.open(ahead, base: point)
        #expect(store.initialStatus == .ok)
        #expect(store.mapVersion == UpdateFixture.newVersion)
        #expect(try Self.ownFiles(ahead) == before)
        #expect(try await store.verify(full: true).isEmpty)
        let recorded = try await offPool { try Tool.mappack(["verify", ahead.storage]) }
        #expect(recorded.status == 0, "\(recorded.stdout) \(recorded.stderr)")
        // Its base is the new one now: a later start finds nothing to take over.
        let later = try await Self.open(ahead, base: point)
        #expect(later.initialStatus == .ok && later.mapVersion == UpdateFixture.newVersion)
    }
}
