import Foundation
import TestSupport
import Testing

@Suite struct NoOpRebuildTests {
    func done(_ result: Tool.Result) -> [String: Any]? {
        result.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .first { $0["event"] as? String == "done" }
    }

    @Test func unchangedRebuildDoesNothingUntilAnOutputOrInputChanges() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let first = try world.build(recipe, ["--json"])
        #expect(done(first)?["upToDate"] as? Bool == false)
        let packed = world.out + "/fixture-1.0.tar.zst"
        let before = try FileManager.default.attributesOfItem(atPath: packed)[.modificationDate] as? Date

        let second = try world.build(recipe, ["--json"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(done(second)?["upToDate"] as? Bool == true)
        #expect(!second.stdout.contains("bundle-unpacked"))
        #expect(try FileManager.default.attributesOfItem(atPath: packed)[.modificationDate] as? Date == before)
        #expect(done(second)?["imageID"] as? String == done(first)?["imageID"] as? String)

        // A replaced output (here the packed image) makes the next build a real one.
        try Data("not an image".utf8).write(to: URL(fileURLWithPath: packed))
        let replaced = try world.build(recipe, ["--json"])
        #expect(done(replaced)?["upToDate"] as? Bool == false)
        #expect(try Tool.mappack(["verify", packed]).status == 0)

        // Files changed inside the store are not looked for (that would walk the whole store):
        // verify finds them and --force rebuilds, which restores the image.
        try FileManager.default.removeItem(atPath: world.out + "/fixture-1.0/store/regions/europe/ch/zh/tiles.db")
        let third = try world.build(recipe, ["--json"])
        #expect(done(third)?["upToDate"] as? Bool == true)
        let damaged = try Tool.mappack(["verify", world.out + "/fixture-1.0"])
        #expect(damaged.status == 1)
        #expect((damaged.stdout + damaged.stderr).contains("regions/europe/ch/zh/tiles.db"))
        let repaired = try world.build(recipe, ["--json", "--force"])
        #expect(done(repaired)?["upToDate"] as? Bool == false)
        #expect(try Tool.mappack(["verify", world.out + "/fixture-1.0"]).status == 0)

        // Another build time is another input.
        let fourth = try Tool.mappack(
            ["build", recipe, "--cache", world.cache, "--out", world.out, "--json"], environment: ["SOURCE_DATE_EPOCH": "1790000001"])
        #expect(done(fourth)?["upToDate"] as? Bool == false)
        let forced = try Tool.mappack(
            ["build", recipe, "--cache", world.cache, "--out", world.out, "--json", "--force"], environment: ["SOURCE_DATE_EPOCH": "1790000001"])
        #expect(done(forced)?["upToDate"] as? Bool == false)
    }

    /// Each file under `folder` with its inode number and modification time: what a rewrite changes.
    func identities(under folder: String) throws -> [String: String] {
        var found: [String: String] = [:]
        for path in try FileManager.default.subpathsOfDirectory(atPath: folder) {
            let attributes = try FileManager.default.attributesOfItem(atPath: folder + "/" + path)
            guard attributes[.type] as? FileAttributeType == .typeRegular else { continue }
            found[path] = "\(attributes[.systemFileNumber] ?? "?") \(attributes[.modificationDate] ?? "?")"
        }
        return found
    }

    /// Over HTTP an unchanged catalog costs a `304`, and the no-op then writes nothing: the catalog
    /// kept in the download cache is not written (and synced) again. Every input that changed still
    /// makes a real build: the catalog on the server, the recipe, a missing output.
    @Test func noOpOverHTTPWritesNothingAndEachChangedInputRebuilds() throws {
        let world = try ServedWorld()
        let nginx = try NginxServer(root: world.published)
        let recipe = try world.recipe(catalog: nginx.baseURL.appendingPathComponent("catalog.json").absoluteString)
        let first = try world.build(recipe, cache: "cache", out: "out", extra: ["--json"])
        #expect(done(first)?["upToDate"] as? Bool == false, "\(first.stderr)")
        let kept = world.folder.join("cache/catalogs")
        let before = try identities(under: kept)
        #expect(before.keys.contains { $0.hasSuffix("/catalog.json") })

        let second = try world.build(recipe, cache: "cache", out: "out", extra: ["--json"])
        #expect(done(second)?["upToDate"] as? Bool == true, "\(second.stderr)")
        #expect(try identities(under: kept) == before)

        // Another catalog on the server (one byte more): fetched, kept, built.
        let served = world.published + "/catalog.json"
        try (Data(contentsOf: URL(fileURLWithPath: served)) + Data("\n".utf8)).write(to: URL(fileURLWithPath: served))
        let changed = try world.build(recipe, cache: "cache", out: "out", extra: ["--json"])
        #expect(done(changed)?["upToDate"] as? Bool == false, "\(changed.stderr)")
        let keptCatalog = try #require(try identities(under: kept).keys.first { $0.hasSuffix("/catalog.json") })
        #expect(try Data(contentsOf: URL(fileURLWithPath: kept + "/" + keptCatalog)) == Data(contentsOf: URL(fileURLWithPath: served)))
        let again = try world.build(recipe, cache: "cache", out: "out", extra: ["--json"])
        #expect(done(again)?["upToDate"] as? Bool == true, "\(again.stderr)")

        // Another recipe (a comment more).
        try (Data(contentsOf: URL(fileURLWithPath: recipe)) + Data("# changed\n".utf8)).write(to: URL(fileURLWithPath: recipe))
        let edited = try world.build(recipe, cache: "cache", out: "out", extra: ["--json"])
        #expect(done(edited)?["upToDate"] as? Bool == false, "\(edited.stderr)")

        // A missing output.
        try FileManager.default.removeItem(atPath: world.folder.join("out/net-2026.11.0/manifest.json"))
        let missing = try world.build(recipe, cache: "cache", out: "out", extra: ["--json"])
        #expect(done(missing)?["upToDate"] as? Bool == false, "\(missing.stderr)")
        #expect(try Tool.mappack(["verify", world.folder.join("out/net-2026.11.0")]).status == 0)
    }
}
