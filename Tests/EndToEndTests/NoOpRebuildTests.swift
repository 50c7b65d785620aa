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
}
