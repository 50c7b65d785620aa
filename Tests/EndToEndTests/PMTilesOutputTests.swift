import Foundation
import TestSupport
import Testing

/// Issue 30: `output.formats: [pmtiles]` writes `<image>.pmtiles`, PMTiles v3, read by the PyPI
/// `pmtiles` reader (header, directories, metadata) and `mapbox_vector_tile` (the tiles), tile for
/// tile the same as the `.mbtiles` of the same recipe, the same bytes on every build.
@Suite struct PMTilesOutputTests {
    static let image = "alps-2026.12.0"
    static let buildTimeout: TimeInterval = 600

    /// Builds of Switzerland and Liechtenstein with the world overview in the cache seed (which stays
    /// out of the archive, issue 42): one with `.mbtiles` beside the `.pmtiles`, one more of the
    /// `.pmtiles` alone, and one whose directory is cut into leaf directories of 2 entries
    /// (`MAPPACK_PMTILES_LEAF_ENTRIES`; the two countries have 5 tiles).
    final class Built: @unchecked Sendable {
        static let shared = Built()
        let folder = TemporaryFolder("real-pmtiles")
        let first: Tool.Result
        let second: Tool.Result
        let leaves: Tool.Result

        func output(_ build: String, _ suffix: String) -> String { folder.join("\(build)/\(PMTilesOutputTests.image)\(suffix)") }

        private init() {
            let folder = folder
            do {
                first = try Built.build(in: folder, "first", formats: "[directory, mbtiles, pmtiles]")
                second = try Built.build(in: folder, "second", formats: "[directory, pmtiles]")
                leaves = try Built.build(in: folder, "leaves", formats: "[directory, pmtiles]", environment: ["MAPPACK_PMTILES_LEAF_ENTRIES": "2"])
            } catch {
                preconditionFailure("real-world pmtiles builds: \(error)")
            }
        }

        /// Builds the recipe into `folder/name` (the download cache shared).
        private static func build(in folder: TemporaryFolder, _ name: String, formats: String, environment: [String: String] = [:]) throws
            -> Tool.Result
        {
            let recipe = folder.join("\(name).yaml")
            let include = [RealWorldFixture.switzerland, RealWorldFixture.liechtenstein]
            try Data(RealWorldFixture.shared.recipe(include: include, formats: formats).utf8).write(to: URL(fileURLWithPath: recipe))
            return try Tool.mappack(
                ["build", recipe, "--out", folder.join(name), "--cache", folder.join("cache")], environment: environment,
                timeout: PMTilesOutputTests.buildTimeout)
        }
    }

    /// From the countries' lowest zoom (6); the seed's overview (zooms 0–5) is not in the archive.
    @Test func pmtilesReadsWithThePMTilesReaderAndHoldsSwitzerlandFromItsLowestZoom() throws {
        let built = Built.shared
        #expect(built.first.status == 0, "\(built.first.stderr)")
        let check = try RealWorldFixture.check(
            ["pmtiles", built.output("first", ".pmtiles"), "--expect-layer", "countries", "--expect-name", "Switzerland", "--min-zoom", "6"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }

    @Test func everyMBTilesTileIsTheSameBytesInThePMTiles() throws {
        let built = Built.shared
        #expect(built.first.status == 0, "\(built.first.stderr)")
        let check = try RealWorldFixture.check(["pmtiles-matches", built.output("first", ".mbtiles"), built.output("first", ".pmtiles")])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }

    @Test func twoBuildsWriteTheSameBytes() throws {
        let built = Built.shared
        #expect(built.first.status == 0 && built.second.status == 0, "\(built.first.stderr)\(built.second.stderr)")
        let first = try Data(contentsOf: URL(fileURLWithPath: built.output("first", ".pmtiles")))
        let second = try Data(contentsOf: URL(fileURLWithPath: built.output("second", ".pmtiles")))
        #expect(first.count > 127)
        #expect(first == second)
    }

    @Test func leafDirectoriesReadTheSameTiles() throws {
        let built = Built.shared
        #expect(built.leaves.status == 0, "\(built.leaves.stderr)")
        let archive = built.output("leaves", ".pmtiles")
        let header = [UInt8](try FileHandle(forReadingFrom: URL(fileURLWithPath: archive)).read(upToCount: 127) ?? Data())
        try #require(header.count == 127)
        // Leaf directories length, bytes 48–55 little-endian.
        let leafLength = (0..<8).reduce(UInt64(0)) { $0 | UInt64(header[48 + $1]) << (8 * UInt64($1)) }
        #expect(leafLength > 0)
        let check = try RealWorldFixture.check(["pmtiles", archive, "--expect-name", "Switzerland", "--min-zoom", "6"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        let same = try RealWorldFixture.check(["pmtiles-matches", built.output("first", ".mbtiles"), archive])
        #expect(same.status == 0, "\(same.stdout)\(same.stderr)")
    }

    @Test func mixedTileFormatsAreRefused() throws {
        let world = RealWorldFixture.shared
        let folder = TemporaryFolder("real-pmtiles-mixed")
        // Liechtenstein's tiles say png, Switzerland's pbf.
        #expect(try Tool.run("/bin/cp", ["-a", world.source, folder.join("source")], timeout: 120).status == 0)
        let liTiles = folder.join("source/bundles/europe.western-europe.li.tiles/regions/\(RealWorldFixture.liechtenstein)/tiles.db")
        let update = try Tool.run("/usr/bin/sqlite3", [liTiles, "UPDATE metadata SET value = 'png' WHERE name = 'format'"], timeout: 60)
        #expect(update.status == 0, "\(update.stderr)")
        let publish = try Tool.mappack(["publish", folder.join("source"), "--out", folder.join("catalog")], timeout: Self.buildTimeout)
        #expect(publish.status == 0, "\(publish.stderr)")
        try Data(
            world.recipe(
                catalog: folder.join("catalog/catalog.json"), include: [RealWorldFixture.switzerland, RealWorldFixture.liechtenstein],
                formats: "[directory, pmtiles]"
            ).utf8
        ).write(to: URL(fileURLWithPath: folder.join("mixed.yaml")))
        let build = try Tool.mappack(
            ["build", folder.join("mixed.yaml"), "--out", folder.join("Output"), "--cache", folder.join("cache")], timeout: Self.buildTimeout)
        #expect(build.status == 2, "\(build.stderr)")
        #expect(build.stderr.contains(RealWorldFixture.liechtenstein) && build.stderr.contains("png"), "\(build.stderr)")
        #expect(build.stderr.contains("pmtiles"), "\(build.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.join("Output/\(Self.image).pmtiles")))
        #expect(!FileManager.default.fileExists(atPath: folder.join("Output/\(Self.image)")))
    }
}
