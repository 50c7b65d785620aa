import Foundation
import MapFormat
import MapIO
import MapStore
import TestSupport
import Testing

/// Several catalogs in one store (issue 42 item 1): the image's world catalog and an added Japan
/// catalog side by side, each downloaded, checked and updated on its own, neither changing the other.
@Suite struct CatalogsTests {
    /// The world (the image's catalog, `demo-world`) and Japan served by two real nginx servers, and a
    /// store installed from the world image that keeps the world catalog of its version.
    struct Setup {
        let world: UpdateFixture
        let japan: CatalogsFixture
        let worldServer: NginxServer
        let japanServer: NginxServer
        let device = Device()

        init() async throws {
            world = try await UpdateFixture.ready()
            japan = try await CatalogsFixture.ready()
            worldServer = try NginxServer(root: world.served)
            japanServer = try NginxServer(root: japan.served)
        }

        func stop() {
            worldServer.stop()
            japanServer.stop()
        }

        func worldURL(_ version: MapVersion) -> URL {
            URL(string: "cat-\(version)/catalog.json", relativeTo: worldServer.baseURL)!.absoluteURL
        }
        var japanOld: URL { japan.japanURL(CatalogsFixture.japanOld, on: japanServer) }
        var japanNew: URL { japan.japanURL(CatalogsFixture.japanNew, on: japanServer) }

        func open() async throws -> MapStore {
            try await device.open(image: world.image, catalog: worldURL(UpdateFixture.oldVersion))
        }
    }

    @Test func worldAndJapanAreDownloadedCheckedAndUpdatedSideBySide() async throws {
        let setup = try await Setup()
        defer { setup.stop() }
        let store = try await setup.open()
        let worldOffered = try store.availableRegions().map(\.id)
        #expect(worldOffered.contains("world"))

        let added = try await store.addCatalog(url: setup.japanOld)
        #expect(added.id == "japan" && added.mapVersion == CatalogsFixture.japanOld && !added.isImageCatalog && added.installedRegions.isEmpty)
        #expect(try store.catalogs().map(\.id) == ["demo-world", "japan"])
        #expect(try store.catalogs().first?.isImageCatalog == true)
        // Adding Japan changed nothing the world offers.
        #expect(try store.availableRegions(catalog: "demo-world").map(\.id) == worldOffered)
        #expect(try store.availableRegions(catalog: "japan").map(\.id) == CatalogsFixture.japanRegions)
        #expect(try store.availableRegions().map(\.id) == worldOffered + CatalogsFixture.japanRegions)
        #expect(try store.availableRegions(catalog: "japan").allSatisfy { $0.catalog == "japan" && $0.mapVersion == CatalogsFixture.japanOld })

        // A download from each catalog, by region id alone.
        try await store.download(regions: ["japan/tokyo"]).wait()
        try await store.download(regions: ["world"]).wait()
        let afterDownloads = try store.regions()
        #expect(afterDownloads.first { $0.id == "japan/tokyo" }?.mapVersion == CatalogsFixture.japanOld)
        #expect(afterDownloads.first { $0.id == "world" }?.mapVersion == UpdateFixture.oldVersion)
        #expect(afterDownloads.allSatisfy { $0.state == .completed })
        #expect(store.mapVersion == UpdateFixture.oldVersion)
        #expect(
            try store.catalogs().map(\.installedRegions) == [afterDownloads.map(\.id).filter { !$0.rawValue.hasPrefix("japan") }, ["japan/tokyo"]])
        #expect(try await store.verify(full: true).isEmpty)

        // A check of the world marks the world's regions only; a check of Japan marks Japan's only.
        let worldInfo = try await store.checkForUpdate(catalog: setup.worldURL(UpdateFixture.newVersion))
        #expect(worldInfo.catalog == "demo-world" && worldInfo.status == .oldData && !worldInfo.changedRegions.contains("japan/tokyo"))
        #expect(try store.regions().filter { $0.state != .outdated }.map(\.id) == ["japan/tokyo"])
        #expect(try store.catalogs().map(\.updateStatus) == [.oldData, .upToDate])
        let japanInfo = try await store.checkForUpdate(catalog: setup.japanNew, in: "japan")
        #expect(japanInfo.catalog == "japan" && japanInfo.status == .oldData && japanInfo.availableVersion == CatalogsFixture.japanNew)
        #expect(japanInfo.installedVersion == CatalogsFixture.japanOld && japanInfo.changedRegions == ["japan/tokyo"])
        #expect(try store.regions().allSatisfy { $0.state == .outdated })
        #expect(try store.catalogs().map(\.updateStatus) == [.oldData, .oldData])

        // Updating Japan leaves the world at its version, still outdated.
        try await store.update(in: "japan")
        var regions = try store.regions()
        #expect(regions.first { $0.id == "japan/tokyo" }.map { "\($0.mapVersion) \($0.state)" } == "\(CatalogsFixture.japanNew) completed")
        #expect(regions.filter { $0.id != "japan/tokyo" }.allSatisfy { $0.state == .outdated && $0.mapVersion == UpdateFixture.oldVersion })
        #expect(store.mapVersion == UpdateFixture.oldVersion)
        #expect(try store.catalogs().map(\.mapVersion) == [UpdateFixture.oldVersion, CatalogsFixture.japanNew])
        #expect(try await store.verify(full: true).isEmpty)

        // Updating the world leaves Japan at its version.
        try await store.update()
        regions = try store.regions()
        #expect(regions.first { $0.id == "japan/tokyo" }.map { "\($0.mapVersion) \($0.state)" } == "\(CatalogsFixture.japanNew) completed")
        #expect(regions.filter { $0.id != "japan/tokyo" }.allSatisfy { $0.state == .completed && $0.mapVersion == UpdateFixture.newVersion })
        #expect(store.mapVersion == UpdateFixture.newVersion)
        #expect(try store.catalogs().map(\.mapVersion) == [UpdateFixture.newVersion, CatalogsFixture.japanNew])
        #expect(try store.catalogs().map(\.updateStatus) == [.upToDate, .upToDate])
        #expect(try await store.verify(full: true).isEmpty)
        let tokyo = try #require(try store.path(of: "regions/japan/tokyo/tiles.db"))
        #expect(FileManager.default.fileExists(atPath: tokyo.path))
        #expect(try await store.checkForUpdates().map { "\($0.catalog) \($0.status)" } == ["demo-world upToDate", "japan upToDate"])

        // Both catalogs are there after a reopen; Japan still offers Osaka at its new version.
        let reopened = try await setup.device.open(image: setup.world.image)
        #expect(reopened.initialStatus == .ok)
        #expect(try reopened.catalogs().map(\.id) == ["demo-world", "japan"])
        #expect(try reopened.availableRegions(catalog: "japan").map(\.id) == ["japan", "japan/osaka"])
        #expect(try reopened.availableRegions(catalog: "japan").first?.mapVersion == CatalogsFixture.japanNew)
    }

    @Test func automaticUpdatesCheckAndUpdateEachCatalog() async throws {
        let setup = try await Setup()
        defer { setup.stop() }
        let store = try await setup.open()
        try await store.addCatalog(url: setup.japanOld)
        try await store.download(regions: ["japan/tokyo"]).wait()
        // Each catalog's next check reads its newer version (remembered by a check without autoUpdate).
        _ = try await store.checkForUpdate(catalog: setup.japanNew, in: "japan")
        _ = try await store.checkForUpdate(catalog: setup.worldURL(UpdateFixture.newVersion))
        let events = store.events()
        store.autoUpdate = true
        var finished: [String] = []
        watching: for await event in events {
            switch event {
            case .updateFinished(let version):
                finished.append(version.rawValue)
                if finished.count == 2 { break watching }
            case .updateFailed(let error), .updateCheckFailed(let error):
                Issue.record("automatic update failed: \(error)")
                break watching
            default:
                continue
            }
        }
        store.autoUpdate = false
        #expect(finished.sorted() == [CatalogsFixture.japanNew.rawValue, UpdateFixture.newVersion.rawValue])
        #expect(try store.catalogs().map(\.mapVersion) == [UpdateFixture.newVersion, CatalogsFixture.japanNew])
        #expect(try store.regions().allSatisfy { $0.state == .completed })
        #expect(try await store.verify(full: true).isEmpty)
    }

    /// A store with Japan added and Tokyo (and `alsoDownloading`) installed, whose next check of each
    /// catalog reads its newer version (a check remembers the URL it read).
    static func bothCatalogsChecked(_ setup: Setup, alsoDownloading: [RegionID] = []) async throws -> MapStore {
        let store = try await setup.open()
        try await store.addCatalog(url: setup.japanOld)
        try await store.download(regions: ["japan/tokyo"]).wait()
        if !alsoDownloading.isEmpty { try await store.download(regions: alsoDownloading).wait() }
        _ = try await store.checkForUpdate(catalog: setup.japanNew, in: "japan")
        _ = try await store.checkForUpdate(catalog: setup.worldURL(UpdateFixture.newVersion))
        return store
    }

    /// `updateAll()`: every catalog with a newer version is updated, each in its own switch; neither
    /// changes the other, and a second run finds both up to date.
    @Test func updateAllUpdatesEveryCatalogWithANewerVersion() async throws {
        let setup = try await Setup()
        defer { setup.stop() }
        let store = try await Self.bothCatalogsChecked(setup, alsoDownloading: ["world"])
        let log = AutoUpdateTests.EventLog(store.events())
        let results = try await store.updateAll()
        #expect(results.map { "\($0.catalog) \($0.outcome)" } == ["demo-world updated", "japan updated"])
        #expect(results.map { $0.info?.availableVersion } == [UpdateFixture.newVersion, CatalogsFixture.japanNew])
        #expect(try store.catalogs().map(\.mapVersion) == [UpdateFixture.newVersion, CatalogsFixture.japanNew])
        let regions = try store.regions()
        #expect(regions.first { $0.id == "japan/tokyo" }.map { "\($0.mapVersion) \($0.state)" } == "\(CatalogsFixture.japanNew) completed")
        #expect(regions.filter { $0.id != "japan/tokyo" }.allSatisfy { $0.state == .completed && $0.mapVersion == UpdateFixture.newVersion })
        #expect(try await store.verify(full: true).isEmpty)
        #expect(try await store.updateAll().map { "\($0.catalog) \($0.outcome)" } == ["demo-world upToDate", "japan upToDate"])
        // Each update's events name its catalog (`StoreEvent.catalog`).
        #expect(await eventually(10) { log.all.filter { $0.kind == .updateStarted }.count == 2 })
        #expect(log.all.filter { $0.kind == .updateStarted }.map(\.catalog) == ["demo-world", "japan"])
    }

    /// `updateAll()` with one catalog's server down: the other is updated all the same (its own commit),
    /// the failed one is reported with its error and keeps its version and regions.
    @Test func updateAllKeepsEveryOtherCatalogsUpdateWhenOneFails() async throws {
        let setup = try await Setup()
        defer { setup.stop() }
        let store = try await Self.bothCatalogsChecked(setup)
        setup.japanServer.stop()
        let results = try await store.updateAll()
        #expect(results.map { "\($0.catalog) \($0.outcome)" } == ["demo-world updated", "japan failed"])
        #expect(results.last?.error != nil && results.first?.error == nil)
        #expect(try store.catalogs().map(\.mapVersion) == [UpdateFixture.newVersion, CatalogsFixture.japanOld])
        #expect(try store.regions().first { $0.id == "japan/tokyo" }?.mapVersion == CatalogsFixture.japanOld)
        #expect(try await store.verify(full: true).isEmpty)
    }

    /// The app declining the world's automatic update to 2026.12.0 does not decline Japan's update to
    /// its own 2026.12.0: declines and deferrals are kept per catalog, not per version string.
    @Test func aDeclineOfOneCatalogsVersionLeavesAnotherCatalogAtTheSameVersion() async throws {
        let setup = try await Setup()
        defer { setup.stop() }
        let store = try await setup.open()
        try await store.addCatalog(url: setup.japanOld)
        try await store.download(regions: ["japan/tokyo"]).wait()
        let japanSame = setup.japan.japanURL(UpdateFixture.newVersion, on: setup.japanServer)
        #expect(try await store.checkForUpdate(catalog: japanSame, in: "japan").availableVersion == UpdateFixture.newVersion)
        #expect(try await store.checkForUpdate(catalog: setup.worldURL(UpdateFixture.newVersion)).availableVersion == UpdateFixture.newVersion)
        store.autoUpdateApproval = { info in info.catalog == "demo-world" ? .decline(reason: "not the world") : .update }
        let log = AutoUpdateTests.EventLog(store.events())
        store.autoUpdate = true
        let updated = await eventually(120) {
            (try? store.catalogs().map(\.mapVersion)) == [UpdateFixture.oldVersion, UpdateFixture.newVersion]
        }
        store.autoUpdate = false
        #expect(updated, "\(log.updateSteps)")
        #expect(AutoUpdateApprovalTests.declines(log) == ["\(UpdateFixture.newVersion) not the world"])
        #expect(store.mapVersion == UpdateFixture.oldVersion)
        #expect(try store.regions().first { $0.id == "japan/tokyo" }?.mapVersion == UpdateFixture.newVersion)
    }

    /// With trusted keys an added catalog must be signed, and follows trust records of its own (its
    /// lineage is its id, not the image catalog's; its signature counter moves on with its checks).
    @Test func anAddedCatalogFollowsTrustRecordsOfItsOwn() async throws {
        let setup = try await Setup()
        defer { setup.stop() }
        _ = try await setup.open()
        let keys = TemporaryFolder("catalogs-signed")
        let made = try await offPool { try Tool.mappack(["keygen", "--out", keys.join("release")]) }
        #expect(made.status == 0, "\(made.stderr)")
        for (version, counter) in [(CatalogsFixture.japanOld, "1"), (CatalogsFixture.japanNew, "2")] {
            let source = keys.join("src-\(version)")
            try CatalogSourceFixture.writeJapan(to: source, version: version.rawValue, tokyoChanged: version == CatalogsFixture.japanNew)
            let publish = try await offPool {
                try Tool.mappack([
                    "publish", source, "--out", keys.join("served/japan-\(version)"), "--sign", keys.join("release.key"), "--catalog-version",
                    counter,
                ])
            }
            #expect(publish.status == 0, "\(publish.stderr)")
        }
        let signed = try NginxServer(root: keys.join("served"))
        defer { signed.stop() }
        func signedURL(_ version: MapVersion) -> URL { URL(string: "japan-\(version)/catalog.json", relativeTo: signed.baseURL)!.absoluteURL }
        let store = try await MapStore.open(
            storage: setup.device.storageURL, cache: setup.device.cacheURL,
            options: .init(trustedPublicKeys: [try String(contentsOfFile: keys.join("release.pub"), encoding: .utf8)]))
        let unsigned = await failure { try await store.addCatalog(url: setup.japanOld) }
        guard case .catalogUnsigned? = unsigned else {
            Issue.record("an unsigned catalog was added with trusted keys: \(String(describing: unsigned))")
            return
        }
        #expect(try store.catalogs().map(\.id) == ["demo-world"])
        try await store.addCatalog(url: signedURL(CatalogsFixture.japanOld))
        #expect(try store.catalogs().map(\.id) == ["demo-world", "japan"])
        let info = try await store.checkForUpdate(catalog: signedURL(CatalogsFixture.japanNew), in: "japan")
        #expect(info.catalog == "japan" && info.status == .oldData)
        // Japan's counters are at 2 now: its first catalog (counter 1) is refused as stale, by its timestamp first.
        let rolledBack = await failure { _ = try await store.checkForUpdate(catalog: signedURL(CatalogsFixture.japanOld), in: "japan") }
        guard case .catalogTimestampStale(_, let seen, let offered)? = rolledBack else {
            Issue.record("japan's older signed catalog was not refused as stale: \(String(describing: rolledBack))")
            return
        }
        #expect(seen == 2 && offered == 1)
        // Recorded with Japan's row: a store opened again judges by them too.
        let reopened = try await MapStore.open(
            storage: setup.device.storageURL, cache: setup.device.cacheURL,
            options: .init(trustedPublicKeys: [try String(contentsOfFile: keys.join("release.pub"), encoding: .utf8)]))
        let again = await failure { _ = try await reopened.checkForUpdate(catalog: signedURL(CatalogsFixture.japanOld), in: "japan") }
        guard case .catalogTimestampStale? = again else {
            Issue.record("after a reopen japan's older signed catalog was not refused: \(String(describing: again))")
            return
        }
    }

    @Test func setCatalogURLOfAnotherCatalogIsRefusedAndReplacesNothing() async throws {
        let setup = try await Setup()
        defer { setup.stop() }
        let store = try await setup.open()
        let offered = try store.availableRegions().map(\.id)
        // Japan at the world's own map version: the earlier library kept it in the world's place.
        let sameVersion = setup.japan.japanURL(UpdateFixture.oldVersion, on: setup.japanServer)
        let replaced = await failure { try await store.setCatalogURL(sameVersion) }
        guard case .unknownCatalog? = replaced else {
            Issue.record("a URL of another catalog at the same version was taken for the image's: \(String(describing: replaced))")
            return
        }
        #expect(try store.availableRegions().map(\.id) == offered)
        let refused = await failure { try await store.setCatalogURL(setup.japanOld) }
        guard case .unknownCatalog(let catalog, let url, let catalogs)? = refused else {
            Issue.record("a URL of another catalog was taken for the image's: \(String(describing: refused))")
            return
        }
        #expect(catalog == "japan" && url == setup.japanOld && catalogs == ["demo-world"])
        #expect(try store.availableRegions().map(\.id) == offered)
        #expect(store.catalogURL == setup.worldURL(UpdateFixture.oldVersion))
        await #expect(throws: MapStoreError.self) { try await store.download(regions: ["japan/tokyo"]).wait() }
        // A world region still downloads; a check of Japan's URL is refused too, marking nothing.
        try await store.download(regions: ["world"]).wait()
        await #expect(throws: MapStoreError.self) { _ = try await store.checkForUpdate(catalog: setup.japanNew) }
        #expect(try store.regions().allSatisfy { $0.state == .completed })
        // Once added, setCatalogURL with Japan's URL is Japan's.
        try await store.addCatalog(url: setup.japanOld)
        try await store.setCatalogURL(setup.japanOld)
        #expect(try store.catalogs().map(\.url) == [setup.worldURL(UpdateFixture.oldVersion), setup.japanOld])
        let twice = await failure { try await store.addCatalog(url: setup.japanNew) }
        guard case .catalogAlreadyAdded(let again, _)? = twice else {
            Issue.record("the same catalog was added twice: \(String(describing: twice))")
            return
        }
        #expect(again == "japan")
    }

    @Test func aRegionIDOfferedByTwoCatalogsIsRefused() async throws {
        let setup = try await Setup()
        defer { setup.stop() }
        let store = try await setup.open()
        let refused = await failure { try await store.addCatalog(url: setup.japan.clashURL(on: setup.japanServer)) }
        guard case .catalogRegionClash(let region, let catalogs)? = refused, let refused else {
            Issue.record("a catalog offering the world's 'europe' was added: \(String(describing: refused))")
            return
        }
        #expect(region == "europe" && catalogs == ["demo-world", "clash"])
        #expect(refused.description.contains("'demo-world'") && refused.description.contains("'clash'") && refused.description.contains("'europe'"))
        #expect(try store.catalogs().map(\.id) == ["demo-world"])
        #expect(try store.availableRegions().allSatisfy { $0.catalog == "demo-world" })
    }

    @Test func aCatalogIsRemovedOnlyWhenNoneOfItsRegionsIsOnTheDevice() async throws {
        let setup = try await Setup()
        defer { setup.stop() }
        let store = try await setup.open()
        try await store.addCatalog(url: setup.japanOld)
        try await store.download(regions: ["japan/osaka"], catalog: "japan").wait()
        let inUse = await failure { try await store.removeCatalog("japan") }
        guard case .catalogInUse(let catalog, let regions)? = inUse else {
            Issue.record("a catalog with an installed region was removed: \(String(describing: inUse))")
            return
        }
        #expect(catalog == "japan" && regions == ["japan/osaka"])
        let image = await failure { try await store.removeCatalog("demo-world") }
        guard case .catalogInUse(let imageCatalog, let none)? = image else {
            Issue.record("the image's catalog was removed: \(String(describing: image))")
            return
        }
        #expect(imageCatalog == "demo-world" && none.isEmpty)
        await #expect(throws: MapStoreError.self) { try await store.download(regions: ["japan/osaka", "world"]).wait() }
        try await store.deleteRegions(["japan/osaka"])
        try await store.removeCatalog("japan")
        #expect(try store.catalogs().map(\.id) == ["demo-world"])
        #expect(try store.availableRegions().allSatisfy { $0.catalog == "demo-world" })
        #expect(try await store.verify(full: true).isEmpty)
    }

    /// A store made before several catalogs (no catalog tables, no `catalogsSchema` row: what the
    /// earlier library wrote) opens, lists, downloads and updates, then takes a second catalog.
    @Test func aStoreMadeBeforeSeveralCatalogsOpensAndKeepsWorking() async throws {
        let setup = try await Setup()
        defer { setup.stop() }
        do {
            let store = try await setup.open()
            #expect(try store.availableRegions().contains { $0.id == "world" })
        }
        // The state as the library before this change left it.
        do {
            let state = try SQLiteDatabase(path: setup.device.storage + "/state.sqlite")
            try state.execute("DROP TABLE added_catalogs; DROP TABLE region_catalogs; DELETE FROM meta WHERE key = 'catalogsSchema';")
            #expect(try state.firstRow("SELECT name FROM sqlite_master WHERE name = 'region_catalogs'") == nil)
        }
        let store = try await setup.device.open(image: setup.world.image)
        #expect(store.initialStatus == .ok)
        #expect(try store.catalogs().map(\.id) == ["demo-world"])
        #expect(try store.availableRegions().contains { $0.id == "world" })
        try await store.download(regions: ["world"]).wait()
        #expect(try await store.checkForUpdate(catalog: setup.worldURL(UpdateFixture.newVersion)).status == .oldData)
        try await store.update()
        #expect(store.mapVersion == UpdateFixture.newVersion)
        #expect(try store.regions().allSatisfy { $0.state == .completed && $0.mapVersion == UpdateFixture.newVersion })
        #expect(try await store.verify(full: true).isEmpty)
        let state = try SQLiteDatabase(path: setup.device.storage + "/state.sqlite")
        #expect(try state.firstRow("SELECT value FROM meta WHERE key = 'catalogsSchema'")?["value", as: String.self] == "1")
        try await store.addCatalog(url: setup.japanOld)
        try await store.download(regions: ["japan/tokyo"]).wait()
        #expect(try store.catalogs().map(\.installedRegions.count) == [try store.regions().count - 1, 1])
    }
}

/// The `MapStoreError` `body` throws; nil when it returns.
func failure(_ body: () async throws -> Void) async -> MapStoreError? {
    do {
        try await body()
        return nil
    } catch let error as MapStoreError {
        return error
    } catch {
        Issue.record("not a MapStoreError: \(error)")
        return nil
    }
}

/// An added catalog's download and update SIGKILLed at named points of their switch: after open and
/// repair the catalog's rows (its regions, its version) are exactly before or after, as the files are.
@Suite struct CatalogsCrashTests {
    @Test(arguments: ["download.beforeNext", "download.afterNext", "download.beforeCommit", "download.afterCommit"])
    func killedDownloadOfAnAddedCatalogRecordsItsRegionsWithTheCommit(_ point: String) async throws {
        let setup = try await CatalogsTests.Setup()
        defer { setup.stop() }
        let store = try await setup.open()
        try await store.addCatalog(url: setup.japanOld)
        let result = try await setup.device.run(["download", "japan/tokyo", "--catalog", "japan"], crashAt: point)
        #expect(result.status == SIGKILL, "\(result.stderr)")
        let reopened = try await setup.device.open(image: setup.world.image)
        _ = try await reopened.repair()
        let installed = try reopened.catalogs().map(\.installedRegions)
        let finished = point != "download.beforeNext"
        #expect(installed[1] == (finished ? ["japan/tokyo"] : []), "\(installed)")
        #expect(try reopened.regions().contains { $0.id == "japan/tokyo" } == finished)
        #expect(try await reopened.verify(full: true).isEmpty)
        // The catalog stays Japan's whatever the cut: the download runs to the end afterwards.
        try await reopened.download(regions: ["japan/tokyo"]).wait()
        #expect(try reopened.catalogs().map(\.installedRegions)[1] == ["japan/tokyo"])
    }

    @Test(arguments: ["update.beforeNext", "update.afterNext", "update.beforeCommit"])
    func killedUpdateOfAnAddedCatalogMovesItsVersionWithTheCommit(_ point: String) async throws {
        let setup = try await CatalogsTests.Setup()
        defer { setup.stop() }
        let store = try await setup.open()
        try await store.addCatalog(url: setup.japanOld)
        try await store.download(regions: ["japan/tokyo"]).wait()
        let result = try await setup.device.run(["update", "--catalog", setup.japanNew.absoluteString], crashAt: point)
        #expect(result.status == SIGKILL, "\(result.stderr)")
        let reopened = try await setup.device.open(image: setup.world.image)
        _ = try await reopened.repair()
        let expected = point == "update.beforeNext" ? CatalogsFixture.japanOld : CatalogsFixture.japanNew
        #expect(try reopened.catalogs().map(\.mapVersion) == [UpdateFixture.oldVersion, expected])
        #expect(try reopened.regions().first { $0.id == "japan/tokyo" }?.mapVersion == expected)
        #expect(try reopened.regions().filter { $0.id != "japan/tokyo" }.allSatisfy { $0.mapVersion == UpdateFixture.oldVersion })
        #expect(reopened.mapVersion == UpdateFixture.oldVersion)
        #expect(try await reopened.verify(full: true).isEmpty)
    }
}
