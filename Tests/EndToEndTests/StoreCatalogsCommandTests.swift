import Foundation
import TestSupport
import Testing

/// `mappack store catalogs` and `--catalog URL|ID` (issue 42 item 1), through the real binary against
/// real nginx: a store from the world image (catalog `fixture`) takes the `japan` catalog beside it;
/// each is downloaded from, checked and updated on its own, and neither changes the other.
@Suite struct StoreCatalogsCommandTests {
    /// The lines of `--json` output, decoded.
    static func records(_ output: String) throws -> [[String: Any]] {
        try output.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
    }

    /// Publishes under `folder/served` the world in two versions (2.0 changes Liechtenstein) and Japan in
    /// `japan`'s versions (each saying whether it changes Tokyo).
    static func publishWorldAndJapan(in folder: TemporaryFolder, japan: [(String, Bool)]) throws {
        let served = folder.join("served")
        for (version, changed) in [("1.0", Set<String>()), ("2.0", ["li"])] {
            try SourceFixture.write(to: folder.join("world-src-\(version)"), mapVersion: version, changed: changed)
            #expect(try Tool.mappack(["publish", folder.join("world-src-\(version)"), "--out", served + "/world-\(version)"]).status == 0)
        }
        for (version, changed) in japan {
            try CatalogSourceFixture.writeJapan(to: folder.join("japan-src-\(version)"), version: version, tokyoChanged: changed)
            #expect(try Tool.mappack(["publish", folder.join("japan-src-\(version)"), "--out", served + "/japan-\(version)"]).status == 0)
        }
    }

    @Test func worldAndJapanSideBySideThroughTheCLI() throws {
        let world = try PublishedWorld()
        let folder = world.folder
        let served = folder.join("served")
        // The world in two versions (2.0 changes Liechtenstein), Japan in two (the second changes Tokyo), and a clash.
        // Japan also at the world's version 1.0: the earlier store kept it in the world's place (issue 42).
        try Self.publishWorldAndJapan(in: folder, japan: [("1.0", false), ("2026.10.0", false), ("2026.11.5", true)])
        try CatalogSourceFixture.writeClash(to: folder.join("clash-src"))
        #expect(try Tool.mappack(["publish", folder.join("clash-src"), "--out", served + "/clash"]).status == 0)
        let recipe = try world.recipe(SourceFixture.recipe(catalog: served + "/world-1.0/catalog.json"))
        let built = try world.build(recipe)
        #expect(built.status == 0, "\(built.stderr)")
        let nginx = try NginxServer(root: served)
        defer { nginx.stop() }
        func url(_ path: String) -> String { URL(string: path, relativeTo: nginx.baseURL)!.absoluteURL.absoluteString }
        let device = ["--storage", folder.join("device/maps"), "--cache", folder.join("device/cache")]
        func store(_ arguments: [String]) throws -> Tool.Result { try Tool.mappack(["store"] + arguments + device) }
        func regions() throws -> [String: (state: String, version: String)] {
            let listed = try store(["regions", "--json"])
            var out: [String: (String, String)] = [:]
            for record in try Self.records(listed.stdout) {
                out[record["id"] as? String ?? ""] = (record["state"] as? String ?? "", record["mapVersion"] as? String ?? "")
            }
            return out
        }

        #expect(try store(["install", "--image", world.out + "/fixture-1.0"]).status == 0)
        let li = try store(["download", "europe/li", "--catalog", url("world-1.0/catalog.json")])
        #expect(li.status == 0, "\(li.stderr)")
        // Japan's URL does not replace the world: refused until the catalog is added, also at the world's version.
        for japan in ["japan-1.0", "japan-2026.10.0"] {
            let refused = try store(["download", "japan/tokyo", "--catalog", url(japan + "/catalog.json")])
            #expect(refused.status == 2 && refused.stderr.contains("'japan'") && refused.stderr.contains("catalogs add"), "\(refused.stderr)")
        }
        let stillWorld = try store(["download", "world"])
        #expect(stillWorld.status == 0, "\(stillWorld.stderr)")
        let added = try store(["catalogs", "add", url("japan-2026.10.0/catalog.json")])
        #expect(added.status == 0 && added.stdout.contains("added catalog japan"), "\(added.stdout)\(added.stderr)")
        let listed = try Self.records(try store(["catalogs", "--json"]).stdout)
        #expect(listed.map { $0["id"] as? String } == ["fixture", "japan"])
        #expect(listed.map { $0["imageCatalog"] as? Bool } == [true, false])
        #expect(listed.last?["installedRegions"] as? Int == 0 && listed.last?["mapVersion"] as? String == "2026.10.0")
        let offered = try Self.records(try store(["available", "--catalog", "japan", "--json"]).stdout)
        #expect((offered.first?["regions"] as? [[String: Any]])?.map { $0["id"] as? String } == CatalogSourceFixture.japanRegions)
        let worldOffered = try store(["available"])
        #expect(worldOffered.stdout.contains("\neurope ") && worldOffered.stdout.contains("japan/osaka"), "\(worldOffered.stdout)")
        #expect(worldOffered.stdout.contains("CATALOG"), "\(worldOffered.stdout)")
        let across = try Self.records(try store(["available", "--json"]).stdout)
        let byCatalog = Dictionary(
            grouping: (across.first?["regions"] as? [[String: Any]] ?? []), by: { $0["catalog"] as? String ?? "-" }
        ).mapValues { $0.compactMap { $0["id"] as? String } }
        #expect(byCatalog["japan"] == CatalogSourceFixture.japanRegions && byCatalog["fixture"]?.contains("europe") == true, "\(byCatalog)")

        let tokyo = try store(["download", "japan/tokyo"])
        #expect(tokyo.status == 0, "\(tokyo.stderr)")
        #expect(try regions()["japan/tokyo"]?.version == "2026.10.0")

        // Japan's check marks Japan's region only.
        let check = try store(["update", "--check", "--catalog", url("japan-2026.11.5/catalog.json")])
        #expect(check.status == 0 && check.stdout.hasPrefix("catalog japan: "), "\(check.stdout)\(check.stderr)")
        var now = try regions()
        #expect(now["japan/tokyo"]?.state == "outdated")
        #expect(now.filter { $0.key != "japan/tokyo" }.allSatisfy { $0.value.state == "completed" }, "\(now)")
        // Japan's update (by id: the URL last checked) leaves the world at 1.0.
        let japanUpdate = try store(["update", "--catalog", "japan"])
        #expect(
            japanUpdate.status == 0 && japanUpdate.stdout.contains("catalog japan map version 2026.11.5"),
            "\(japanUpdate.stdout)\(japanUpdate.stderr)")
        now = try regions()
        #expect(now["japan/tokyo"].map { "\($0.state) \($0.version)" } == "completed 2026.11.5")
        #expect(now.filter { $0.key != "japan/tokyo" }.allSatisfy { $0.value == ("completed", "1.0") }, "\(now)")
        // The world's update leaves Japan at its version.
        let worldUpdate = try store(["update", "--catalog", url("world-2.0/catalog.json")])
        #expect(worldUpdate.status == 0 && worldUpdate.stdout.contains("map version 2.0"), "\(worldUpdate.stdout)\(worldUpdate.stderr)")
        now = try regions()
        #expect(now["japan/tokyo"].map { "\($0.state) \($0.version)" } == "completed 2026.11.5")
        #expect(now.filter { $0.key != "japan/tokyo" }.allSatisfy { $0.value == ("completed", "2.0") }, "\(now)")
        #expect(try store(["verify"]).status == 0)
        let table = try store(["catalogs"])
        #expect(table.stdout.contains("fixture (image)") && table.stdout.contains("2026.11.5"), "\(table.stdout)")

        // A region id of two catalogs is refused, naming both; a catalog with installed regions stays.
        let clash = try store(["catalogs", "add", url("clash/catalog.json")])
        #expect(clash.status == 2 && clash.stderr.contains("'fixture'") && clash.stderr.contains("'clash'"), "\(clash.stderr)")
        let inUse = try store(["catalogs", "remove", "japan"])
        #expect(inUse.status == 2 && inUse.stderr.contains("japan/tokyo") && inUse.stderr.contains("delete"), "\(inUse.stderr)")
        #expect(try store(["delete", "japan/tokyo"]).status == 0)
        let removed = try store(["catalogs", "remove", "japan"])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try Self.records(try store(["catalogs", "--json"]).stdout).map { $0["id"] as? String } == ["fixture"])
    }

    /// `store update --check --all` reports every catalog, `store update --all` updates each that has a
    /// newer version (the world and Japan both), neither changing the other; `--json` names the catalog.
    @Test func updateAllUpdatesEveryCatalogThroughTheCLI() throws {
        let world = try PublishedWorld()
        let folder = world.folder
        let served = folder.join("served")
        try Self.publishWorldAndJapan(in: folder, japan: [("2026.10.0", false), ("2026.11.5", true)])
        let built = try world.build(try world.recipe(SourceFixture.recipe(catalog: served + "/world-1.0/catalog.json")))
        #expect(built.status == 0, "\(built.stderr)")
        let nginx = try NginxServer(root: served)
        defer { nginx.stop() }
        func url(_ path: String) -> String { URL(string: path, relativeTo: nginx.baseURL)!.absoluteURL.absoluteString }
        let device = ["--storage", folder.join("device/maps"), "--cache", folder.join("device/cache")]
        func store(_ arguments: [String]) throws -> Tool.Result { try Tool.mappack(["store"] + arguments + device) }

        #expect(try store(["install", "--image", world.out + "/fixture-1.0"]).status == 0)
        #expect(try store(["download", "europe/li", "--catalog", url("world-1.0/catalog.json")]).status == 0)
        #expect(try store(["catalogs", "add", url("japan-2026.10.0/catalog.json")]).status == 0)
        #expect(try store(["download", "japan/tokyo"]).status == 0)
        // Each catalog's next check reads its newer version.
        #expect(try store(["update", "--check", "--catalog", url("world-2.0/catalog.json")]).status == 0)
        #expect(try store(["update", "--check", "--catalog", url("japan-2026.11.5/catalog.json")]).status == 0)

        let both = try store(["update", "--check", "--catalog", "japan", "--all"])
        #expect(both.status == 2 && both.stderr.contains("--all"), "\(both.stderr)")
        let checked = try store(["update", "--check", "--all", "--json"])
        #expect(checked.status == 0, "\(checked.stderr)")
        let records = try Self.records(checked.stdout)
        #expect(
            records.map { "\($0["catalog"] ?? "-") \($0["status"] ?? "-") \($0["availableVersion"] ?? "-")" } == [
                "fixture oldData 2.0", "japan oldData 2026.11.5",
            ])
        let text = try store(["update", "--check", "--all"])
        #expect(text.stdout.hasPrefix("catalog fixture: ") && text.stdout.contains("\ncatalog japan: "), "\(text.stdout)")

        let updated = try store(["update", "--all", "--json"])
        #expect(updated.status == 0, "\(updated.stdout)\(updated.stderr)")
        let events = try Self.records(updated.stdout).filter { $0["event"] as? String == "updated" }
        #expect(events.map { "\($0["catalog"] ?? "-") \($0["catalogVersion"] ?? "-")" } == ["fixture 2.0", "japan 2026.11.5"])
        var versions: [String: String] = [:]
        for record in try Self.records(try store(["regions", "--json"]).stdout) {
            versions[record["id"] as? String ?? ""] = "\(record["state"] ?? "-") \(record["mapVersion"] ?? "-")"
        }
        #expect(versions["japan/tokyo"] == "completed 2026.11.5")
        #expect(versions.filter { $0.key != "japan/tokyo" }.allSatisfy { $0.value == "completed 2.0" }, "\(versions)")
        #expect(try store(["verify"]).status == 0)
        let again = try store(["update", "--all"])
        #expect(again.status == 0 && again.stdout.contains("catalog fixture: up to date at 2.0"), "\(again.stdout)\(again.stderr)")
        #expect(again.stdout.contains("catalog japan: up to date at 2026.11.5"), "\(again.stdout)")
    }
}
