import Foundation
import MapIO
import TestSupport
import Testing

@Suite struct PackedImageTests {
    @Test func twoBuildsGiveIdenticalBytesWhateverJobsAndCache() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let first = try Tool.mappack(
            ["build", recipe, "--cache", world.folder.join("cache-a"), "--out", world.folder.join("a"), "--jobs", "1"],
            environment: ["SOURCE_DATE_EPOCH": "1790000000"])
        #expect(first.status == 0, "\(first.stderr)")
        // Warm the second cache first, then build from it with more jobs.
        _ = try Tool.mappack(
            ["build", recipe, "--cache", world.folder.join("cache-b"), "--out", world.folder.join("tmp")],
            environment: ["SOURCE_DATE_EPOCH": "1790000000"])
        let second = try Tool.mappack(
            ["build", recipe, "--cache", world.folder.join("cache-b"), "--out", world.folder.join("b"), "--jobs", "8"],
            environment: ["SOURCE_DATE_EPOCH": "1790000000"])
        #expect(second.status == 0, "\(second.stderr)")
        let a = world.folder.join("a")
        let b = world.folder.join("b")
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: a + "/fixture-1.0.tar.zst"))
                == Data(contentsOf: URL(fileURLWithPath: b + "/fixture-1.0.tar.zst")))
        let diff = try Tool.run("/usr/bin/diff", ["-r", a + "/fixture-1.0", b + "/fixture-1.0"])
        #expect(diff.status == 0, "\(diff.stdout)")
    }

    @Test func stockTarListsTheImageAndItsExtractionVerifies() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        #expect(try world.build(recipe).status == 0)
        let packed = world.out + "/fixture-1.0.tar.zst"
        let listing = try Tool.run("/usr/bin/tar", ["--zstd", "-tf", packed])
        let names = listing.stdout.split(separator: "\n").map(String.init)
        #expect(names.first == "manifest.json")
        let folderFiles = try DirectoryWalker.walk(world.out + "/fixture-1.0").map { $0.isDirectory ? $0.relativePath + "/" : $0.relativePath }
        #expect(Set(names) == Set(folderFiles))
        let unpacked = world.folder.join("unpacked")
        try FileManager.default.createDirectory(atPath: unpacked, withIntermediateDirectories: true)
        let extract = try Tool.run("/usr/bin/bsdtar", ["-xf", packed, "-C", unpacked])
        #expect(extract.status == 0, "\(extract.stderr)")
        #expect(try Tool.mappack(["verify", unpacked]).status == 0)
        #expect(try Tool.mappack(["verify", packed]).status == 0)
    }

    @Test func verifyOfPackedImageNamesACorruptedEntry() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog, formats: "[directory]"))
        #expect(try world.build(recipe).status == 0)
        let image = world.out + "/fixture-1.0"
        try Data("tampered".utf8).write(to: URL(fileURLWithPath: image + "/store/regions/europe/ch/be/routing/1/a.rt"))
        let packed = world.folder.join("tampered.tar.zst")
        let pack = try Tool.run("/usr/bin/tar", ["--zstd", "-cf", packed, "-C", image, "manifest.json", "cache-seed.sqlite", "store"])
        #expect(pack.status == 0, "\(pack.stderr)")
        let verify = try Tool.mappack(["verify", packed])
        #expect(verify.status == 1)
        #expect(verify.stderr.contains("regions/europe/ch/be/routing/1/a.rt"), "\(verify.stderr)")
        #expect(verify.stderr.contains("europe/ch/be"), "\(verify.stderr)")
    }
}
