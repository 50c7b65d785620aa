import Foundation
import TestSupport
import Testing

/// Catalog and recipe strings that become file names: refused with exit 2 and their location,
/// and nothing outside the output folder is ever renamed or removed.
@Suite struct PathGrammarTests {
    /// `world`'s catalog with `replace` swapped for `with`, written back.
    static func edit(_ world: PublishedWorld, _ replace: String, _ with: String) throws {
        let text = try String(contentsOfFile: world.catalog, encoding: .utf8)
        let edited = text.replacingOccurrences(of: replace, with: with)
        precondition(edited != text, "the catalog has no \(replace)")
        try Data(edited.utf8).write(to: URL(fileURLWithPath: world.catalog))
    }

    /// A recipe without a map version pin, so the catalog's version decides the output name.
    static func unpinnedRecipe(_ world: PublishedWorld, name: String = "fixture") throws -> String {
        try world.recipe("name: \(name)\ncatalog: \(world.catalog)\nregions:\n  include: [europe/li]\n")
    }

    @Test func catalogMapVersionThatClimbsOutIsRefusedAndNothingOutsideIsReplaced() throws {
        let world = try PublishedWorld()
        let victim = world.folder.join("victim")
        try FileManager.default.createDirectory(atPath: victim, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: victim + "/keep.txt"))
        // Output/fixture-a/../fixture-a/../../victim is <folder>/victim.
        try Self.edit(world, #""mapVersion":"1.0""#, #""mapVersion":"a/../fixture-a/../../victim""#)
        let result = try world.build(try Self.unpinnedRecipe(world))
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(/catalog\.json:\d+:\d+:/) && result.stderr.contains("mapVersion"), "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: victim + "/keep.txt"))
        #expect(!FileManager.default.fileExists(atPath: victim + "/manifest.json"))
        let left = (try? FileManager.default.contentsOfDirectory(atPath: world.out)) ?? []
        #expect(left.isEmpty, "\(left)")
    }

    @Test(arguments: [
        (#""catalog":"fixture""#, #""catalog":"../fixture""#, "catalog"),
        (#""mapVersion":"1.0""#, #""mapVersion":".hidden""#, "mapVersion"),
        (#""mapVersion":"1.0""#, #""mapVersion":"1.0\u0000x""#, "mapVersion"),
        (#""id":"europe/li""#, #""id":"europe/../li""#, "regions"),
        (#""id":"europe/li""#, #""id":"europe//li""#, "regions"),
    ])
    func catalogNameThatIsNoPlainNameExitsTwoWithItsLine(_ replace: String, _ with: String, _ field: String) throws {
        let world = try PublishedWorld()
        try Self.edit(world, replace, with)
        for verb in ["regions", "plan"] {
            let result =
                verb == "regions" ? try Tool.mappack(["regions", world.catalog]) : try Tool.mappack(["plan", try Self.unpinnedRecipe(world)])
            #expect(result.status == 2, "\(verb): \(result.stderr)")
            #expect(
                result.stderr.contains(/catalog\.json:\d+:\d+:/) && result.stderr.contains(field) && result.stderr.contains("letters, digits"),
                "\(verb): \(result.stderr)")
        }
    }

    @Test(arguments: [("name: ../x\n", "r.yaml:1:7"), ("name: .x\n", "r.yaml:1:7"), ("name: x\nmapVersion: a/b\n", "r.yaml:2:13")])
    func recipeNameOrPinThatIsNoPlainNameExitsTwo(_ head: String, _ location: String) throws {
        let folder = TemporaryFolder("recipe-name")
        try Data((head + "catalog: c.json\nregions:\n  include: [a]\n").utf8).write(to: URL(fileURLWithPath: folder.join("r.yaml")))
        let result = try Tool.mappack(["plan", "r.yaml"], in: folder.path)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(location), "\(result.stderr)")
    }
}

/// Paths read from records mappack wrote earlier (a shard's `shard.json`) are joined to folders
/// only when clean.
@Suite struct ShardRecordPathTests {
    @Test func shardRecordWithAClimbingPathIsNotAShard() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let shard = try world.build(recipe, ["--shard", "1/1"])
        #expect(shard.status == 0, "\(shard.stderr)")
        let folder = world.out + "/fixture-1.0.shard-1-of-1"
        let record = folder + "/shard.json"
        let text = try String(contentsOfFile: record, encoding: .utf8)
        let first = try #require(text.range(of: #""path":""#))
        try Data(text.replacingCharacters(in: first, with: #""path":"../../../../victim/"#).utf8).write(to: URL(fileURLWithPath: record))
        let merged = try Tool.mappack(["merge", folder, "--out", world.folder.join("merged")])
        #expect(merged.status == 2, "\(merged.stderr)")
        #expect(merged.stderr.contains("shard.json lists file '../../../../victim/") && merged.stderr.contains("climbs out"), "\(merged.stderr)")
        #expect(!FileManager.default.fileExists(atPath: world.folder.join("victim")))
    }

    @Test func shardStoreFileThatIsALinkIsNotCopiedThrough() throws {
        let world = try PublishedWorld()
        let shard = try world.build(try world.recipe(SourceFixture.recipe(catalog: world.catalog)), ["--shard", "1/1"])
        #expect(shard.status == 0, "\(shard.stderr)")
        let folder = world.out + "/fixture-1.0.shard-1-of-1"
        let victim = world.folder.join("victim.db")
        let stored = folder + "/store/regions/europe/ch/overview.db"
        // The victim holds the very bytes the record expects: only the link gives it away.
        try FileManager.default.moveItem(atPath: stored, toPath: victim)
        try FileManager.default.createSymbolicLink(atPath: stored, withDestinationPath: victim)
        let merged = try Tool.mappack(["merge", folder, "--out", world.folder.join("merged")])
        #expect(merged.status == 2, "\(merged.stderr)")
        #expect(merged.stderr.contains("regions/europe/ch/overview.db does not match its shard record"), "\(merged.stderr)")
    }
}
