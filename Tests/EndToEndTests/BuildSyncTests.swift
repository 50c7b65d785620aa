import Foundation
import TestSupport
import Testing

/// Fast by default, durable on request (issue 43 item 1): a build does not sync its outputs unless
/// `--sync` asks, and its stamp names the boot. A run after a reboot (played here by the test
/// builds' `MAPPACK_TEST_BOOT_ID`) reads outputs that may have lost writes back in full before it
/// calls them up to date, and builds them again when a byte differs; a `--sync` build's outputs stay
/// up to date across it unread.
@Suite struct BuildSyncTests {
    func events(_ result: Tool.Result) -> [[String: Any]] {
        result.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    func done(_ result: Tool.Result) -> [String: Any]? { events(result).first { $0["event"] as? String == "done" } }

    func upToDate(_ result: Tool.Result) -> Bool? { done(result)?["upToDate"] as? Bool }

    /// Whether the run read its outputs back (the `check` phase).
    func checked(_ result: Tool.Result) -> Bool {
        events(result).contains { $0["event"] as? String == "phase" && $0["phase"] as? String == "check" }
    }

    func build(_ world: PublishedWorld, _ recipe: String, boot: String, _ extra: [String] = []) throws -> Tool.Result {
        try Tool.mappack(
            ["build", recipe, "--cache", world.cache, "--out", world.out, "--json"] + extra,
            environment: ["SOURCE_DATE_EPOCH": "1790000000", "MAPPACK_TEST_BOOT_ID": boot])
    }

    func stamp(_ world: PublishedWorld) throws -> String {
        try String(contentsOfFile: world.out + "/.fixture-1.0.build.json", encoding: .utf8)
    }

    /// Changes one byte of `path` in place and puts its modification time back, as a lost or torn
    /// write would leave it: only reading every byte finds it.
    func damage(_ path: String) throws {
        var before = stat()
        try #require(unsafe stat(path, &before) == 0)
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        let middle = UInt64(before.st_size / 2)
        try handle.seek(toOffset: middle)
        let byte = try #require(try handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: middle)
        try handle.write(contentsOf: Data([byte ^ 0x5A]))
        try handle.close()
        var times = [before.st_atim, before.st_mtim]
        try #require(unsafe utimensat(AT_FDCWD, path, &times, 0) == 0)
    }

    @Test func unsyncedOutputsAreReadBackAfterARebootAndSyncedOnesAreNot() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let first = try build(world, recipe, boot: "boot-1")
        #expect(first.status == 0 && upToDate(first) == false, "\(first.stderr)")
        let written = try stamp(world)
        #expect(written.contains("\"synced\":false") && written.contains("\"bootID\":\"boot-1\""), "\(written)")
        // The packed image's digest is recorded for the check; the folder's manifest lists its own.
        #expect(written.contains("\"name\":\"fixture-1.0.tar.zst\",\"sha256\":\""), "\(written)")
        let again = try build(world, recipe, boot: "boot-1")
        #expect(upToDate(again) == true && !checked(again))

        // After a reboot the unsynced outputs are read back in full, then trusted for this boot.
        let manifest = world.out + "/fixture-1.0/manifest.json"
        let built = try FileManager.default.attributesOfItem(atPath: manifest)[.modificationDate] as? Date
        let rebooted = try build(world, recipe, boot: "boot-2")
        #expect(rebooted.status == 0 && upToDate(rebooted) == true && checked(rebooted), "\(rebooted.stdout)\(rebooted.stderr)")
        #expect(try FileManager.default.attributesOfItem(atPath: manifest)[.modificationDate] as? Date == built)
        #expect(try stamp(world).contains("\"bootID\":\"boot-2\""))
        let sameBoot = try build(world, recipe, boot: "boot-2")
        #expect(upToDate(sameBoot) == true && !checked(sameBoot))

        // A byte lost in the image folder's store, or in the packed image: found, and built again.
        let store = world.out + "/fixture-1.0/store"
        let storeFile = try #require(
            FileManager.default.enumerator(atPath: store)?.compactMap { $0 as? String }.first { name in
                var info = stat()
                return unsafe stat(store + "/" + name, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && info.st_size > 0
            })
        try damage(store + "/" + storeFile)
        let afterFolderDamage = try build(world, recipe, boot: "boot-3")
        #expect(afterFolderDamage.status == 0 && checked(afterFolderDamage) && upToDate(afterFolderDamage) == false, "\(afterFolderDamage.stderr)")
        #expect(try Tool.mappack(["verify", world.out + "/fixture-1.0"]).status == 0)
        try damage(world.out + "/fixture-1.0.tar.zst")
        let afterPackDamage = try build(world, recipe, boot: "boot-4")
        #expect(afterPackDamage.status == 0 && checked(afterPackDamage) && upToDate(afterPackDamage) == false, "\(afterPackDamage.stderr)")
        #expect(try Tool.mappack(["verify", world.out + "/fixture-1.0.tar.zst"]).status == 0)

        // `--sync`: durable outputs stay up to date across a reboot, unread.
        let synced = try build(world, recipe, boot: "boot-4", ["--sync", "--force"])
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(try stamp(world).contains("\"synced\":true"))
        let afterSynced = try build(world, recipe, boot: "boot-5")
        #expect(upToDate(afterSynced) == true && !checked(afterSynced))
        // The two modes write the same image.
        let unsyncedID = try #require(done(afterPackDamage)?["imageID"] as? String)
        #expect(done(synced)?["imageID"] as? String == unsyncedID)
    }

    @Test func theRecipeAsksForDurableOutputsWithOutputSync() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog, formats: "[directory, tar.zst]\n  sync: true"))
        let first = try build(world, recipe, boot: "boot-1")
        #expect(first.status == 0 && upToDate(first) == false, "\(first.stderr)")
        #expect(try stamp(world).contains("\"synced\":true"))
        let rebooted = try build(world, recipe, boot: "boot-2")
        #expect(upToDate(rebooted) == true && !checked(rebooted), "\(rebooted.stdout)")

        // Anything but a boolean is refused where it is written, before any work.
        let bad = try world.recipe(SourceFixture.recipe(catalog: world.catalog, formats: "[directory]\n  sync: yes please"))
        let refused = try Tool.mappack(["build", bad, "--cache", world.cache, "--out", world.out + "-bad"])
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("'output.sync' must be true or false, not 'yes please'"), "\(refused.stderr)")
        let lines = try String(contentsOfFile: bad, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let line = try #require(lines.firstIndex { $0.contains("sync: yes please") }) + 1
        #expect(refused.stderr.contains("recipe.yaml:\(line):9:"), "the place of output.sync: \(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: world.out + "-bad"))
    }

    @Test func aRebootCheckSaysSoOnTheTerminal() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        #expect(try build(world, recipe, boot: "boot-1").status == 0)
        let plain = try Tool.mappack(
            ["build", recipe, "--cache", world.cache, "--out", world.out],
            environment: ["SOURCE_DATE_EPOCH": "1790000000", "MAPPACK_TEST_BOOT_ID": "boot-2"])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stderr.contains("check: the last build's outputs were not synced"), "\(plain.stderr)")
        #expect(plain.stdout.contains("up to date"), "\(plain.stdout)")
    }
}
