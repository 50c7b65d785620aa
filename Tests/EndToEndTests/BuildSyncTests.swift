import Foundation
import TestSupport
import Testing

/// Fast by default, durable on request (issue 43 item 1): a build does not sync its outputs unless
/// `--sync` asks, and its stamp names the boot, so a run after a reboot (played here by the test
/// builds' `MAPPACK_TEST_BOOT_ID`) builds again instead of calling outputs that may have lost writes
/// up to date; a `--sync` build's outputs stay up to date across it.
@Suite struct BuildSyncTests {
    func done(_ result: Tool.Result) -> [String: Any]? {
        result.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .first { $0["event"] as? String == "done" }
    }

    func upToDate(_ result: Tool.Result) -> Bool? { done(result)?["upToDate"] as? Bool }

    func build(_ world: PublishedWorld, _ recipe: String, boot: String, _ extra: [String] = []) throws -> Tool.Result {
        try Tool.mappack(
            ["build", recipe, "--cache", world.cache, "--out", world.out, "--json"] + extra,
            environment: ["SOURCE_DATE_EPOCH": "1790000000", "MAPPACK_TEST_BOOT_ID": boot])
    }

    @Test func unsyncedOutputsAreRebuiltAfterARebootAndSyncedOnesAreNot() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let first = try build(world, recipe, boot: "boot-1")
        #expect(first.status == 0 && upToDate(first) == false, "\(first.stderr)")
        let stamp = try String(contentsOfFile: world.out + "/.fixture-1.0.build.json", encoding: .utf8)
        #expect(stamp.contains("\"synced\":false") && stamp.contains("\"bootID\":\"boot-1\""), "\(stamp)")
        #expect(upToDate(try build(world, recipe, boot: "boot-1")) == true)
        // After a reboot the unsynced outputs are not trusted: built again (from the warm cache), and they verify.
        let rebooted = try build(world, recipe, boot: "boot-2")
        #expect(rebooted.status == 0 && upToDate(rebooted) == false, "\(rebooted.stdout)")
        #expect(try Tool.mappack(["verify", world.out + "/fixture-1.0"]).status == 0)

        // `--sync`: durable outputs stay up to date across a reboot.
        let synced = try build(world, recipe, boot: "boot-2", ["--sync", "--force"])
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(try String(contentsOfFile: world.out + "/.fixture-1.0.build.json", encoding: .utf8).contains("\"synced\":true"))
        #expect(upToDate(try build(world, recipe, boot: "boot-3")) == true)
        // The two modes write the same image.
        let unsyncedID = try #require(done(rebooted)?["imageID"] as? String)
        #expect(done(synced)?["imageID"] as? String == unsyncedID)
    }
}
