import Foundation
import TestSupport
import Testing

/// Symbolic links and foreign owners in the download cache (tests run as root: "another user" is
/// uid 65534).
@Suite struct CacheLinkTests {
    /// The hex digests of every bundle in `world`'s catalog.
    static func digests(_ world: PublishedWorld) throws -> [String] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: world.catalog))) as? [String: Any]
        let bundles = try #require(object?["bundles"] as? [String: Any])
        return bundles.keys.map { String($0.dropFirst("sha256:".count)) }.sorted()
    }

    /// A file outside the cache that a planted link points at.
    static func victim(in world: PublishedWorld) throws -> String {
        let path = world.folder.join("victim.txt")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func partialFilePlantedAsALinkIsNeverWrittenThrough() throws {
        let world = try PublishedWorld()
        let victim = try Self.victim(in: world)
        try FileManager.default.createDirectory(atPath: world.cache + "/partial", withIntermediateDirectories: true)
        for hex in try Self.digests(world) {
            try FileManager.default.createSymbolicLink(atPath: world.cache + "/partial/\(hex).part", withDestinationPath: victim)
            try FileManager.default.createSymbolicLink(atPath: world.cache + "/partial/\(hex).part.meta", withDestinationPath: victim)
        }
        let result = try world.build(try world.recipe(SourceFixture.recipe(catalog: world.catalog)))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        for hex in try Self.digests(world) {
            let cached = world.cache + "/sha256/\(hex.prefix(2))/\(hex)"
            if let type = try? FileManager.default.attributesOfItem(atPath: cached)[.type] as? FileAttributeType {
                #expect(type == .typeRegular, "\(cached)")
            }
        }
    }

    @Test func cachedBundlePlantedAsALinkIsNotTakenForTheBundle() throws {
        let world = try PublishedWorld()
        let victim = try Self.victim(in: world)
        for hex in try Self.digests(world) {
            try FileManager.default.createDirectory(atPath: world.cache + "/sha256/\(hex.prefix(2))", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: world.cache + "/sha256/\(hex.prefix(2))/\(hex)", withDestinationPath: victim)
        }
        let result = try world.build(try world.recipe(SourceFixture.recipe(catalog: world.catalog)))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        let verify = try Tool.mappack(["verify", world.out + "/fixture-1.0"])
        #expect(verify.status == 0, "\(verify.stderr)")
    }

    @Test func cacheFolderThatIsALinkInsideTheCacheIsRefused() throws {
        let world = try PublishedWorld()
        let elsewhere = world.folder.join("elsewhere")
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: world.cache, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: world.cache + "/partial", withDestinationPath: elsewhere)
        let result = try world.build(try world.recipe(SourceFixture.recipe(catalog: world.catalog)))
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(world.cache + "/partial") && result.stderr.contains("symbolic link"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
    }

    @Test(arguments: ["owner", "mode"])
    func cacheFolderOthersCanWriteIsRefused(_ how: String) throws {
        let world = try PublishedWorld()
        try FileManager.default.createDirectory(atPath: world.cache, withIntermediateDirectories: true)
        if how == "owner" { unsafe #expect(chown(world.cache, 65534, 65534) == 0) } else { unsafe #expect(chmod(world.cache, 0o777) == 0) }
        let result = try world.build(try world.recipe(SourceFixture.recipe(catalog: world.catalog)))
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("download cache \(world.cache)") && result.stderr.contains("--cache"), "\(result.stderr)")
        #expect(result.stderr.contains(how == "owner" ? "belongs to user 65534" : "writable by other users"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: world.cache + "/sha256"))
    }
}
