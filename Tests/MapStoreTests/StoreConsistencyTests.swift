import Foundation
import MapFormat
import MapIO
import MapStore
import Synchronization
import TestSupport
import Testing

/// Issue 31's reproduced problems: what a check, an update, a kill and a second process may change,
/// and what readers and event consumers see meanwhile.
@Suite struct StoreConsistencyTests {
    /// nginx serving both versions, the old version's catalog URL, and the new version's catalog served
    /// from another folder (`elsewhere/`, its bundle URLs absolute paths into `cat-NEW/`): a bundle of
    /// the installed version resolved against it is a 404.
    static func servedVersions(_ fixture: UpdateFixture) throws -> (nginx: NginxServer, old: URL, new: URL) {
        var catalog = try fixture.catalog(UpdateFixture.newVersion)
        for key in catalog.bundles.keys { catalog.bundles[key]!.url = "/cat-\(UpdateFixture.newVersion)/" + catalog.bundles[key]!.url }
        try FileSystem.makeDirectories(fixture.served + "/elsewhere")
        try CanonicalJSON.encode(catalog).write(to: URL(fileURLWithPath: fixture.served + "/elsewhere/catalog.json"))
        let nginx = try NginxServer(root: fixture.served)
        let old = URL(string: "cat-\(UpdateFixture.oldVersion)/catalog.json", relativeTo: nginx.baseURL)!.absoluteURL
        let new = URL(string: "elsewhere/catalog.json", relativeTo: nginx.baseURL)!.absoluteURL
        return (nginx, old, new)
    }

    // MARK: 1. a check changes nothing later work depends on

    @Test func checkForUpdateLeavesDownloadsResolvingAgainstTheInstalledCatalog() async throws {
        let fixture = try await UpdateFixture.ready()
        let (nginx, old, new) = try StoreConsistencyTests.servedVersions(fixture)
        defer { nginx.stop() }
        let device = Device()
        let store = try await device.open(image: fixture.image, catalog: old)
        #expect(store.catalogURL == old)
        #expect(try await store.checkForUpdate(catalog: new).status == .oldData)
        #expect(store.catalogURL == old)
        try await store.download(regions: ["world"]).wait()
        try await store.deleteRegions(["europe/ch/zh"])
        try await store.download(regions: ["europe/ch/zh"]).wait()
        #expect(try store.regions().contains { $0.id == "world" && $0.mapVersion == UpdateFixture.oldVersion })
        #expect(try await store.verify(full: true).isEmpty)
        // The update a check found uses the checked catalog; then downloads resolve against it.
        try await store.update()
        #expect(store.mapVersion == UpdateFixture.newVersion)
        #expect(store.catalogURL == new)
        try await store.deleteRegions(["europe/ch/zh"])
        try await store.download(regions: ["europe/ch/zh"]).wait()
        #expect(try await store.verify(full: true).isEmpty)
    }

    @Test func setCatalogURLOfANewerVersionLeavesDownloadsResolvingAgainstTheInstalledCatalog() async throws {
        let fixture = try await UpdateFixture.ready()
        let (nginx, old, new) = try StoreConsistencyTests.servedVersions(fixture)
        defer { nginx.stop() }
        let device = Device()
        let store = try await device.open(image: fixture.image, catalog: old)
        try await store.setCatalogURL(new)
        #expect(store.catalogURL == old)
        try await store.download(regions: ["world"]).wait()
        #expect(try await store.checkForUpdate().availableVersion == UpdateFixture.newVersion)
    }

    // MARK: 2, 3. every state change is announced

    @Test func checkAnnouncesEveryRegionStateItChanges() async throws {
        let fixture = try await UpdateFixture.ready()
        let (nginx, old, new) = try StoreConsistencyTests.servedVersions(fixture)
        defer { nginx.stop() }
        let device = Device()
        let store = try await device.open(image: fixture.image, catalog: old)
        let replay = EventReplay(store)
        #expect(try await store.checkForUpdate(catalog: new).status == .oldData)
        #expect(try store.regions().allSatisfy { $0.state == .outdated })
        let mismatch = await replay.mismatch()
        #expect(mismatch == nil, "\(mismatch ?? "")")
    }

    @Test func downloadOfAParentAnnouncesEveryDescendantItInstalls() async throws {
        let fixture = try await UpdateFixture.ready()
        let (nginx, old, _) = try StoreConsistencyTests.servedVersions(fixture)
        defer { nginx.stop() }
        let device = Device()
        let store = try await device.open(image: fixture.image, catalog: old)
        try await store.deleteRegions(["europe/ch"])
        let children = try fixture.catalog(UpdateFixture.oldVersion).regions.filter { $0.parent == "europe/ch" }.map(\.id)
        #expect(children.count > 1)
        let replay = EventReplay(store)
        let task = try store.download(regions: ["europe/ch"])
        let heard = Task { () -> [RegionID: [RegionState]] in
            var states: [RegionID: [RegionState]] = [:]
            for await case .stateChanged(let id, let state) in task.events { states[id, default: []].append(state) }
            return states
        }
        try await task.wait()
        let states = await heard.value
        for id in ["europe/ch"] + children { #expect(states[id] == [.downloading, .completed], "\(id): \(states[id] ?? [])") }
        let mismatch = await replay.mismatch()
        #expect(mismatch == nil, "\(mismatch ?? "")")
    }

    // MARK: 4. a killed update leaves no region downloading

    @Test(arguments: ["update.afterFetch", "update.afterMark"])
    func killedUpdateLeavesNoRegionDownloadingAndRepairSaysSo(_ point: String) async throws {
        let fixture = try await UpdateFixture.ready()
        let device = Device()
        _ = try await device.open(image: fixture.image)
        let killed = try await device.run(["update", "--catalog", fixture.catalogPath(UpdateFixture.newVersion)], crashAt: point)
        #expect(killed.status == SIGKILL, "\(killed.stderr)")
        let store = try await device.open(image: fixture.image)
        // Killed while fetching, nothing is pending: the store is usable at the old version, as after a killed download.
        if point == "update.afterFetch" {
            #expect(store.initialStatus == .ok)
            let states = try store.regions().map(\.state)
            #expect(states.allSatisfy { $0 == .paused }, "\(states)")
        }
        let report = try await store.repair()
        #expect(
            report.actions.contains { if case .pausedInterruptedFetch(let count) = $0 { count == fixture.manifestRegionCount } else { false } },
            "\(report.actions)")
        let states = try store.regions().map(\.state)
        #expect(states.allSatisfy { $0 == .paused }, "\(states)")
        #expect(store.mapVersion == UpdateFixture.oldVersion)
        try await store.update(catalog: fixture.catalogURL(UpdateFixture.newVersion))
        #expect(try store.regions().allSatisfy { $0.state == .completed && $0.mapVersion == UpdateFixture.newVersion })
    }

    // MARK: 5. readers see one committed snapshot

    /// The files of the manifest at `path`, path → SHA-256.
    static func files(ofManifest path: String) throws -> [String: String] {
        let manifest = try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: path)), file: "manifest.json")
        return Dictionary(manifest.files.map { ($0.path.string, $0.sha256.hex) }, uniquingKeysWith: { first, _ in first })
    }

    @Test func readersDuringAnUpdateNeverSeeANewFileWithTheOldVersion() async throws {
        let fixture = try await UpdateFixture.ready()
        let device = Device()
        let store = try await device.open(image: fixture.image)
        let old = try StoreConsistencyTests.files(ofManifest: fixture.imageFolder + "/manifest.json")
        // Files of bundles the update replaces: their bytes change (or they go).
        let changed = Set(try fixture.changedBundles().keys)
        let manifest = try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: fixture.imageFolder + "/manifest.json")), file: "manifest.json")
        let replaced = Set(try fixture.catalog(UpdateFixture.newVersion).bundles.keys)
        let watched = manifest.files.filter { !replaced.contains($0.bundle) }.map(\.path.string).sorted().prefix(40)
        #expect(!watched.isEmpty && !changed.isEmpty)
        let reader = ReaderLoop(store, paths: Array(watched))
        try await store.update(catalog: fixture.catalogURL(UpdateFixture.newVersion))
        let samples = await reader.stop()
        let new = try StoreConsistencyTests.files(ofManifest: device.storage + "/manifest.json")
        #expect(store.mapVersion == UpdateFixture.newVersion)
        let torn = ReaderLoop.torn(samples, expected: [UpdateFixture.oldVersion: old, UpdateFixture.newVersion: new])
        #expect(torn.isEmpty, "\(torn.count) of \(samples.count) reads torn, e.g. \(torn.prefix(3))")
    }

    @Test func readersDuringADeleteAndAMoveNeverMissTheFilesOfAnInstalledRegion() async throws {
        let fixture = try await UpdateFixture.ready()
        let device = Device()
        let store = try await device.open(image: fixture.image)
        let manifest = try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: fixture.imageFolder + "/manifest.json")), file: "manifest.json")
        let old = try StoreConsistencyTests.files(ofManifest: fixture.imageFolder + "/manifest.json")
        let zurich = Set(try #require(manifest.regions.first { $0.id == "europe/ch/zh" }).bundles)
        let watched = manifest.files.filter { zurich.contains($0.bundle) }.map(\.path.string)
        #expect(!watched.isEmpty)
        var reader = ReaderLoop(store, paths: watched)
        try await store.moveData(to: URL(fileURLWithPath: device.folder.join("moved")))
        var missing = ReaderLoop.missing(await reader.stop(), region: "europe/ch/zh", expected: old)
        #expect(missing.isEmpty, "move: \(missing.count) reads, e.g. \(missing.prefix(3))")
        reader = ReaderLoop(store, paths: watched)
        try await store.deleteRegions(["europe/ch/zh"])
        missing = ReaderLoop.missing(await reader.stop(), region: "europe/ch/zh", expected: old)
        #expect(missing.isEmpty, "delete: \(missing.count) reads, e.g. \(missing.prefix(3))")
    }

    /// A repair finishing an update killed at `point` (new tree staged, renamed into `.update-next`, half
    /// switched, switched but not committed): readers polling from the open on never get a file of one
    /// version while `mapVersion` says the other, nor miss a file.
    @Test(arguments: ["update.afterNext", "update.midSwitch", "update.beforeCommit"])
    func readersDuringARepairOfAKilledUpdateSeeOneVersionsFiles(_ point: String) async throws {
        let fixture = try await UpdateFixture.ready()
        let device = Device()
        _ = try await device.open(image: fixture.image)
        let killed = try await device.run(["update", "--catalog", fixture.catalogPath(UpdateFixture.newVersion)], crashAt: point)
        #expect(killed.status == SIGKILL, "\(killed.stderr)")
        let old = try StoreConsistencyTests.files(ofManifest: fixture.imageFolder + "/manifest.json")
        let manifest = try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: fixture.imageFolder + "/manifest.json")), file: "manifest.json")
        // Files of bundles the update replaces (their bytes change or they go), and some it keeps.
        let replaced = Set(try fixture.catalog(UpdateFixture.newVersion).bundles.keys)
        let changing = manifest.files.filter { !replaced.contains($0.bundle) }.map(\.path.string).sorted().prefix(30)
        let kept = manifest.files.filter { replaced.contains($0.bundle) }.map(\.path.string).sorted().prefix(10)
        #expect(!changing.isEmpty)

        let store = try await device.open(image: fixture.image)
        let reader = ReaderLoop(store, paths: Array(changing) + Array(kept))
        let report = try await store.repair()
        let samples = await reader.stop()
        #expect(report.status == .ok, "\(report.actions)")
        #expect(store.mapVersion == UpdateFixture.newVersion)
        let new = try StoreConsistencyTests.files(ofManifest: device.storage + "/manifest.json")
        #expect(Set(samples.compactMap(\.version)).isSubset(of: [UpdateFixture.oldVersion, UpdateFixture.newVersion]))
        let torn = ReaderLoop.torn(samples, expected: [UpdateFixture.oldVersion: old, UpdateFixture.newVersion: new])
        #expect(torn.isEmpty, "\(torn.count) of \(samples.count) reads torn, e.g. \(torn.prefix(3))")
        #expect(try await store.verify(full: true).isEmpty)
    }
}
