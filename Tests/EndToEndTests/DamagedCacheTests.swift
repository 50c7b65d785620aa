import Foundation
import TestSupport
import Testing

@Suite struct DamagedCacheTests {
    /// A build's download cache is not flushed bundle by bundle; instead every use re-checks the
    /// digest. A damaged cached bundle fails the build with its name, is removed, and the next build
    /// fetches it again.
    @Test func damagedCachedBundleIsCaughtRemovedAndFetchedAgain() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        #expect(try world.build(recipe).status == 0)

        let cached = try FileManager.default.subpathsOfDirectory(atPath: world.cache + "/sha256")
            .filter { $0.contains("/") }.map { world.cache + "/sha256/" + $0 }.sorted()
        let victim = try #require(cached.first)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: victim))
        bytes[bytes.count - 1] ^= 0xFF  // same size, last byte flipped
        try bytes.write(to: URL(fileURLWithPath: victim))
        let digest = String(victim.split(separator: "/").last ?? "")

        let failed = try world.build(recipe, ["--force"])
        #expect(failed.status == 1)
        #expect(failed.stderr.contains(digest.prefix(12)), "\(failed.stderr)")
        #expect(failed.stderr.contains("damaged"), "\(failed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: victim))
        #expect(try Tool.mappack(["verify", world.out + "/fixture-1.0"]).status == 0, "the earlier image stays in place")

        let again = try world.build(recipe, ["--force"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(FileManager.default.fileExists(atPath: victim))
        #expect(try Tool.mappack(["verify", world.out + "/fixture-1.0"]).status == 0)
    }
}
