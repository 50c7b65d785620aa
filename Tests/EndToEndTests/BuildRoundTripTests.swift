import Foundation
import MapFormat
import MapIO
import TestSupport
import Testing

/// A published fixture world and a recipe, in a temp folder of their own.
final class PublishedWorld: @unchecked Sendable {
    let folder = TemporaryFolder("e2e")
    var catalog: String { folder.join("catalog/catalog.json") }
    var cache: String { folder.join("cache") }
    var out: String { folder.join("Output") }

    init() throws {
        try SourceFixture.write(to: folder.join("source"))
        let result = try Tool.mappack(["publish", folder.join("source"), "--out", folder.join("catalog")])
        precondition(result.status == 0, result.stderr)
    }

    /// Writes a recipe and returns its path.
    func recipe(_ text: String, name: String = "recipe.yaml") throws -> String {
        let path = folder.join(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func build(_ recipe: String, _ extra: [String] = []) throws -> Tool.Result {
        try Tool.mappack(["build", recipe, "--cache", cache, "--out", out] + extra, environment: ["SOURCE_DATE_EPOCH": "1790000000"])
    }

    func manifest(_ image: String) throws -> ImageManifest {
        try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: image + "/manifest.json")), file: "manifest.json")
    }
}

@Suite struct BuildRoundTripTests {
    @Test func publishBuildVerifyRoundTrip() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let result = try world.build(recipe)
        #expect(result.status == 0, "\(result.stderr)")
        let image = world.out + "/fixture-1.0"
        let verify = try Tool.mappack(["verify", image])
        #expect(verify.status == 0, "\(verify.stderr)")

        // The store is exactly the union of the selected bundles' trees.
        let manifest = try world.manifest(image)
        let expectedBundles = ["ch", "ch.be", "ch.be.thun", "ch.zh", "border.be-zh"]
        let expectedFiles = expectedBundles.flatMap { SourceFixture.bundles[$0]!.files.keys }.sorted()
        let onDisk = try DirectoryWalker.walk(image + "/store").filter(\.isRegular).map(\.relativePath).sorted()
        #expect(onDisk == expectedFiles)
        #expect(manifest.files.map(\.path.string) == expectedFiles)
        #expect(manifest.regions.map(\.id.rawValue) == ["europe/ch", "europe/ch/be", "europe/ch/be/thun", "europe/ch/zh"])
        #expect(manifest.region("europe/ch")?.name == "Schweiz")

        // sizeOnDiskInBytes equals the files' sizes rounded to blocks and what ext4 really allocates.
        for region in manifest.regions {
            let bundles = Set(manifest.regions.filter { $0.id == region.id || $0.id.rawValue.hasPrefix(region.id.rawValue + "/") }.flatMap(\.bundles))
            let files = manifest.files.filter { bundles.contains($0.bundle) }
            let rounded = files.reduce(Int64(0)) { $0 + ($1.size + 4095) / 4096 * 4096 }
            let allocated = try files.reduce(Int64(0)) { $0 + (try FileSystem.status(image + "/store/" + $1.path.string)!.allocated) }
            #expect(region.sizeOnDiskInBytes == rounded, "\(region.id)")
            #expect(region.sizeOnDiskInBytes == allocated, "\(region.id) allocated")
        }
    }

    @Test func sharedBundleIsFetchedAndStoredOnce() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog, include: ["europe/ch/be", "europe/ch/zh"]))
        let result = try world.build(recipe, ["--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let events = result.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let verified = events.filter { $0["event"] as? String == "bundle-verified" }.compactMap { $0["bundle"] as? String }
        #expect(verified.count == Set(verified).count)
        let manifest = try world.manifest(world.out + "/fixture-1.0")
        #expect(manifest.files.filter { $0.path.string == "borders/be-zh/tiles.db" }.count == 1)
        let shared = manifest.files.first { $0.path.string == "borders/be-zh/tiles.db" }!.bundle
        #expect(manifest.bundles.filter { $0.digest == shared }.count == 1)
        // Both cantons count the shared bundle; their parent is not in the image.
        let be = manifest.region("europe/ch/be")!.sizeOnDiskInBytes
        let zh = manifest.region("europe/ch/zh")!.sizeOnDiskInBytes
        #expect(be == 20480 + 4096 + 0 + 8192 + 4096)
        #expect(zh == 12288 + 4096 + 4096)
    }

    @Test func cacheSeedHoldsTheSeedRegionsAndPassesIntegrityCheck() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        #expect(try world.build(recipe).status == 0)
        let seed = world.out + "/fixture-1.0/cache-seed.sqlite"
        let check = try Tool.run(
            "/usr/bin/sqlite3",
            [seed, "PRAGMA integrity_check; SELECT value FROM meta WHERE key='mapVersion'; SELECT key FROM entries ORDER BY accessed;"])
        #expect(check.stdout == "ok\n1.0\noverview/world/names.txt\noverview/world/tiles.db\n")
    }
}

@Suite struct CacheSeedCapTests {
    @Test(arguments: [
        ("7 KiB", ["overview/world/names.txt"]), ("8 KiB", ["overview/world/names.txt", "overview/world/tiles.db"]), ("100", [String]()),
    ])
    func seedTakesFilesInPriorityOrderUntilTheCap(_ cap: String, _ expected: [String]) throws {
        let world = try PublishedWorld()
        let text = SourceFixture.recipe(catalog: world.catalog).replacingOccurrences(of: "maxBytes: 1 MiB", with: "maxBytes: \(cap)")
        #expect(try world.build(try world.recipe(text)).status == 0)
        let seed = world.out + "/fixture-1.0/cache-seed.sqlite"
        let keys = try Tool.run("/usr/bin/sqlite3", [seed, "SELECT key FROM entries ORDER BY accessed;"]).stdout.split(separator: "\n").map(
            String.init)
        #expect(keys == expected)
        let total = try Tool.run("/usr/bin/sqlite3", [seed, "SELECT coalesce(sum(size), 0) FROM entries;"]).stdout.trimmingCharacters(
            in: .whitespacesAndNewlines)
        #expect(Int64(total)! <= ByteCount.parse(cap)!)
    }
}

@Suite struct TamperingTests {
    enum Tamper: String, CaseIterable, Sendable { case flipByte, deleteFile, addFile }

    @Test(arguments: Tamper.allCases)
    func verifyNamesTheTamperedFile(_ tamper: Tamper) throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog, formats: "[directory]"))
        #expect(try world.build(recipe).status == 0)
        let image = world.out + "/fixture-1.0"
        let target = image + "/store/regions/europe/ch/zh/tiles.db"
        switch tamper {
        case .flipByte:
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: target))
            try handle.seek(toOffset: 100)
            let byte = try handle.read(upToCount: 1)![0]
            try handle.seek(toOffset: 100)
            try handle.write(contentsOf: Data([byte ^ 0x01]))
            try handle.close()
        case .deleteFile:
            try FileManager.default.removeItem(atPath: target)
        case .addFile:
            try Data("x".utf8).write(to: URL(fileURLWithPath: image + "/store/regions/europe/ch/zh/extra.bin"))
        }
        let verify = try Tool.mappack(["verify", image])
        #expect(verify.status == 1)
        let named = tamper == .addFile ? "regions/europe/ch/zh/extra.bin" : "regions/europe/ch/zh/tiles.db"
        #expect(verify.stderr.contains(named), "\(verify.stderr)")
        if tamper != .addFile { #expect(verify.stderr.contains("europe/ch/zh"), "\(verify.stderr)") }
    }

    /// A damaged image fails verification (exit 1, `FAILED` naming the path) whatever its form (issue 43):
    /// a truncated or corrupted `.tar.zst` like a folder with a truncated file. Before, the archive's read
    /// error was a usage error (exit 2).
    @Test func damagedImagesFailVerificationAlike() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog, formats: "[directory, tar.zst]"))
        #expect(try world.build(recipe).status == 0)
        let archive = try Data(contentsOf: URL(fileURLWithPath: world.out + "/fixture-1.0.tar.zst"))
        let truncated = world.out + "/truncated.tar.zst"
        try archive.prefix(archive.count / 2).write(to: URL(fileURLWithPath: truncated))
        let flipped = world.out + "/flipped.tar.zst"
        var bytes = archive
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: flipped))
        let folder = world.out + "/fixture-1.0"
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: folder + "/store/regions/europe/ch/zh/tiles.db"))
        try handle.truncate(atOffset: 100)
        try handle.close()
        for damaged in [truncated, flipped, folder] {
            let verify = try Tool.mappack(["verify", damaged])
            #expect(verify.status == 1, "\(damaged): \(verify.stdout)\(verify.stderr)")
            #expect(verify.stdout.contains("FAILED: \(damaged)"), "\(damaged): \(verify.stdout)")
            let json = try Tool.mappack(["verify", damaged, "--json"])
            #expect(json.status == 1 && json.stdout.contains("\"ok\":false"), "\(damaged): \(json.stdout)")
        }
    }

    @Test func verifyRefusesAPathThatIsNotAnImage() throws {
        let folder = TemporaryFolder("notimage")
        let verify = try Tool.mappack(["verify", folder.path])
        #expect(verify.status == 2)
        #expect(verify.stderr.contains("not a mappack image"))
    }

    @Test func bundleThatDoesNotMatchItsDigestFailsTheBuild() throws {
        let world = try PublishedWorld()
        // Corrupt one published bundle in place: same size, different bytes.
        let catalog = try JSONDecoder().decode(Catalog.self, from: Data(contentsOf: URL(fileURLWithPath: world.catalog)))
        let zh = catalog.regions.first { $0.id == "europe/ch/zh" }!.bundles.first {
            catalog.bundles[$0]!.kind == "tiles" && catalog.bundles[$0]!.files == 2
        }!
        let bundlePath = world.folder.join("catalog/" + catalog.bundles[zh]!.url)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: bundlePath))
        bytes[bytes.count / 2] ^= 0xff
        try bytes.write(to: URL(fileURLWithPath: bundlePath))

        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let result = try world.build(recipe)
        #expect(result.status == 1)
        #expect(result.stderr.contains(zh.description), "\(result.stderr)")
        #expect(result.stderr.contains("europe/ch/zh"), "\(result.stderr)")
        // Nothing under Output looks like a finished image, and the cache holds no bad bytes.
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: world.out)) ?? []
        #expect(leftovers.filter { !$0.hasPrefix(".") }.isEmpty, "\(leftovers)")
        #expect(!FileManager.default.fileExists(atPath: world.cache + "/sha256/\(zh.hex.prefix(2))/\(zh.hex)"))
    }
}

@Suite struct RecipeErrorTests {
    @Test func unknownRegionExitsTwoWithFileLineAndSuggestion() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog, include: ["europe/cj"]))
        let result = try world.build(recipe)
        #expect(result.status == 2)
        #expect(result.stderr.contains("recipe.yaml:6:"), "\(result.stderr)")
        #expect(result.stderr.contains("europe/ch"), "\(result.stderr)")
    }

    @Test func unknownKeyExitsTwoWithFileLineAndNearestKey() throws {
        let world = try PublishedWorld()
        let text = SourceFixture.recipe(catalog: world.catalog).replacingOccurrences(of: "language: de", with: "langauge: de")
        let result = try world.build(try world.recipe(text))
        #expect(result.status == 2)
        #expect(result.stderr.contains("recipe.yaml:4:1: unknown key 'langauge'; did you mean 'language'?"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: world.out))
    }

    @Test func pinnedMapVersionMustMatchTheCatalog() throws {
        let world = try PublishedWorld()
        let text = SourceFixture.recipe(catalog: world.catalog).replacingOccurrences(of: "mapVersion: \"1.0\"", with: "mapVersion: \"2.0\"")
        let result = try world.build(try world.recipe(text))
        #expect(result.status == 2)
        #expect(result.stderr.contains("2.0") && result.stderr.contains("1.0"), "\(result.stderr)")
    }
}
