import Foundation
import MapFormat
import MapIO
import MapStore
import TestSupport
import Testing

/// A catalog cannot brick a store (issue 40 item 2): a download whose bundles would add a file another
/// region owns, or two new regions whose bundles hold one path, is refused before anything changes,
/// naming both owners; and a store a past version left with such a manifest half switched is brought
/// back by `repair()`.
@Suite(.timeLimit(.minutes(10))) struct OwnershipTests {
    /// The fixture's published catalog with `extra` regions (children of `europe`) spliced in, each with
    /// a bundle of its own holding `files` (bytes of its own). The publisher refuses a path in two bundles,
    /// so each extra region is published apart and its region and bundle entries copied in, as a hostile
    /// or broken publishing pipeline would serve them.
    static func hostileCatalog(_ folder: TemporaryFolder, extra: [(id: String, files: [String])]) throws -> String {
        let files = FileManager.default
        let out = folder.join("hostile-catalog")
        try files.copyItem(atPath: StoreFixture.shared.folder.join("catalog"), toPath: out)
        let catalogURL = URL(fileURLWithPath: out + "/catalog.json")
        // Only the plain catalog: a compressed copy or a timestamp beside it would be the unspliced one.
        for name in try files.contentsOfDirectory(atPath: out) where name.hasPrefix("catalog.json.") {
            try files.removeItem(atPath: out + "/" + name)
        }
        guard var catalog = try JSONSerialization.jsonObject(with: Data(contentsOf: catalogURL)) as? [String: Any],
            var regions = catalog["regions"] as? [[String: Any]], var bundles = catalog["bundles"] as? [String: Any]
        else { throw HostileCatalogError("fixture catalog unreadable") }
        for (index, region) in extra.enumerated() {
            let source = folder.join("part-\(index)")
            let name = "part\(index)"
            for path in ["regions/europe/overview.db"] + region.files {
                let bundle = path == "regions/europe/overview.db" ? "europe" : name
                let full = source + "/bundles/" + bundle + "/" + path
                try files.createDirectory(atPath: FileSystem.parent(full), withIntermediateDirectories: true)
                try SourceFixture.bytes(3000, seed: "hostile \(index) " + path).write(to: URL(fileURLWithPath: full))
            }
            let text = """
                {"format":"mappack-source/1","catalog":"fixture","mapVersion":"1.0","released":"2026-11-20T00:00:00Z",
                 "regions":[{"id":"europe","parent":null,"names":{"en":"Europe"},"bundles":["europe"]},
                  {"id":"\(region.id)","parent":"europe","names":{"en":"\(region.id)"},"bundles":["\(name)"]}],
                 "bundles":{"europe":{"kind":"overview"},"\(name)":{"kind":"tiles"}}}
                """
            try Data(text.utf8).write(to: URL(fileURLWithPath: source + "/source.json"))
            let published = folder.join("part-\(index)-catalog")
            let publish = try Tool.mappack(["publish", source, "--out", published])
            guard publish.status == 0 else { throw HostileCatalogError("publish: \(publish.stderr)") }
            guard
                let part = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: published + "/catalog.json")))
                    as? [String: Any],
                let partRegion = (part["regions"] as? [[String: Any]])?.first(where: { $0["id"] as? String == region.id }),
                let digest = (partRegion["bundles"] as? [String])?.first, let info = (part["bundles"] as? [String: Any])?[digest] as? [String: Any],
                let url = info["url"] as? String
            else { throw HostileCatalogError("published part unreadable") }
            regions.append(partRegion)
            bundles[digest] = info
            try files.createDirectory(atPath: FileSystem.parent(out + "/" + url), withIntermediateDirectories: true)
            if !files.fileExists(atPath: out + "/" + url) { try files.copyItem(atPath: published + "/" + url, toPath: out + "/" + url) }
        }
        regions.sort { ($0["id"] as? String ?? "") < ($1["id"] as? String ?? "") }
        catalog["regions"] = regions
        catalog["bundles"] = bundles
        try JSONSerialization.data(withJSONObject: catalog, options: [.sortedKeys]).write(to: catalogURL)
        return out + "/catalog.json"
    }

    func conflict(_ error: MapStoreError) -> (path: String, owners: [String])? {
        if case .ownershipConflict(let path, let owners) = error { return (path, owners) }
        return nil
    }

    @Test func downloadThatWouldOverwriteAnInstalledRegionsFileIsRefusedBeforeAnythingChanges() async throws {
        _ = try await offPool { StoreFixture.shared }
        let folder = TemporaryFolder("hostile-owner")
        let owned = "regions/europe/ch/zh/tiles.db"
        let catalog = try await offPool {
            try OwnershipTests.hostileCatalog(folder, extra: [("europe/zz", [owned])])
        }
        let device = Device()
        let store = try await device.open(catalog: URL(fileURLWithPath: catalog))
        let before = try Data(contentsOf: URL(fileURLWithPath: device.storage + "/store/" + owned))
        let regionsBefore = try store.regions().map(\.id)

        var refused: MapStoreError?
        do { try await store.download(regions: ["europe/zz"], progress: { _, _ in }) } catch { refused = error }
        let failure = try #require(refused)
        let found = try #require(conflict(failure), "\(failure)")
        #expect(found.path == owned)
        #expect(found.owners.contains { $0.contains("europe/ch/zh") } && found.owners.contains { $0.contains("europe/zz") }, "\(found.owners)")
        #expect(!failure.description.contains("mappack store"), "an app-facing message: \(failure)")

        // Nothing changed: the same regions, the same bytes, a store that opens ok, verifies and still writes.
        #expect(try store.regions().map(\.id) == regionsBefore)
        #expect(try Data(contentsOf: URL(fileURLWithPath: device.storage + "/store/" + owned)) == before)
        #expect(try await store.verify(full: true).isEmpty)
        let reopened = try await device.open(catalog: URL(fileURLWithPath: catalog))
        #expect(reopened.initialStatus == .ok)
        try await reopened.download(regions: ["europe/li"], progress: { _, _ in })
        #expect(try reopened.regions().map(\.id).contains("europe/li"))
        #expect(try await reopened.verify(full: true).isEmpty)
    }

    @Test func twoNewRegionsWhoseBundlesHoldOnePathAreRefusedTogether() async throws {
        _ = try await offPool { StoreFixture.shared }
        let folder = TemporaryFolder("hostile-pair")
        let shared = "regions/europe/yy/tiles.db"
        let catalog = try await offPool {
            try OwnershipTests.hostileCatalog(folder, extra: [("europe/yy", [shared]), ("europe/xx", [shared])])
        }
        let device = Device()
        let store = try await device.open(catalog: URL(fileURLWithPath: catalog))
        var refused: MapStoreError?
        do { try await store.download(regions: ["europe/xx", "europe/yy"], progress: { _, _ in }) } catch { refused = error }
        let found = try #require(refused.flatMap(conflict), "\(String(describing: refused))")
        #expect(found.path == shared)
        #expect(found.owners.contains { $0.contains("europe/xx") } && found.owners.contains { $0.contains("europe/yy") }, "\(found.owners)")
        #expect(!FileSystem.exists(device.storage + "/store/" + shared))
        #expect(try store.regions().map(\.id) == StoreFixture.allRegions)
        #expect(try await device.open(catalog: URL(fileURLWithPath: catalog)).initialStatus == .ok)
    }

    /// What an earlier version left: a download killed after its switch, whose new manifest lists a path
    /// twice. `repair()` rolls the switch back to the committed version instead of failing for ever.
    @Test func repairRollsBackASwitchWhoseNewManifestListsAPathTwice() async throws {
        _ = try await offPool { StoreFixture.shared }
        let device = Device()
        let catalog = StoreFixture.shared.folder.join("catalog/catalog.json")
        _ = try await device.open(catalog: URL(fileURLWithPath: catalog))
        let killed = try await device.run(["download", "europe/li", "--catalog", catalog], crashAt: "download.beforeCommit")
        #expect(killed.status == SIGKILL, "\(killed.stderr)")
        // The switched-in manifest gets a second entry for one of its paths, as the old code wrote it.
        let manifestURL = URL(fileURLWithPath: device.storage + "/manifest.json")
        var manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as? [String: Any])
        var files = try #require(manifest["files"] as? [[String: Any]])
        let twice = try #require(files.firstIndex { ($0["path"] as? String) == "regions/europe/li/tiles.db" })
        var copy = files[twice]
        copy["sha256"] = String(repeating: "0", count: 64)
        files.insert(copy, at: twice + 1)
        manifest["files"] = files
        try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys]).write(to: manifestURL)

        let store = try await device.open()
        #expect(store.initialStatus == .interruptedOperation)
        let report = try await store.repair()
        #expect(report.status == .ok)
        #expect(try store.regions().map(\.id) == StoreFixture.allRegions)
        #expect(try await store.verify(full: true).isEmpty)
        let reopened = try await device.open(catalog: URL(fileURLWithPath: catalog))
        #expect(reopened.initialStatus == .ok)
        try await reopened.download(regions: ["europe/li"], progress: { _, _ in })
        #expect(try await reopened.verify(full: true).isEmpty)
    }
}

/// The hostile catalog could not be made (a fixture failure, not the behaviour under test).
struct HostileCatalogError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
