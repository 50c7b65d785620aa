import Foundation
import MapIO
import TestSupport
import Testing

/// A bundle read from a local catalog (`file://`) that is shorter than the catalog says is a wrong
/// file, not a network blip: the build fails at once, naming the bundle, instead of retrying with
/// back-off. Before, it retried four times (about 13 s of sleeps; `make fuzz`'s `build` target
/// timed out on it).
@Suite struct LocalBundleTests {
    @Test func aShortLocalBundleFailsWithoutRetrying() throws {
        let world = try PublishedWorld()
        let bundles = try DirectoryWalker.walk(world.folder.join("catalog/bundles")).filter(\.isRegular)
        let victim = try #require(bundles.first { $0.relativePath.hasSuffix(".tar.zst") })
        let path = world.folder.join("catalog/bundles/" + victim.relativePath)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.dropLast().write(to: URL(fileURLWithPath: path))
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let result = try world.build(recipe, ["--json"])
        #expect(result.status == 1, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(!lines.contains { $0.contains(#""event":"retry""#) }, "\(result.stdout)")
        #expect(result.stderr.contains("ended early after \(bytes.count - 1) bytes"), "\(result.stderr)")
        #expect(result.stderr.contains("after 1 attempt"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: world.out + "/fixture-1.0"))
    }
}
