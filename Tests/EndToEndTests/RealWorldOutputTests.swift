import Foundation
import TestSupport
import Testing

/// Issue 30, output bugs 1–4: real vector tiles (Natural Earth through tippecanoe) through publish
/// and build into `.mbtiles` and MapLibre offline databases, read by tools nobody here wrote: GDAL's
/// `ogrinfo`, MapLibre Native (pymgl) drawing the map, `mapbox_vector_tile` decoding the tiles.
@Suite struct RealWorldOutputTests {
    /// One build of Switzerland and Liechtenstein with the world overview in the cache seed (which
    /// stays out of the tile outputs, issue 42).
    final class Built: @unchecked Sendable {
        static let shared = Built()
        let folder = TemporaryFolder("real-outputs")
        var out: String { folder.join("Output") }
        var mbtiles: String { out + "/alps-2026.12.0.mbtiles" }
        var maplibre: String { out + "/alps-2026.12.0.maplibre.db" }
        let build: Tool.Result

        private init() {
            let world = RealWorldFixture.shared
            do {
                try Data(
                    world.recipe(
                        include: [RealWorldFixture.switzerland, RealWorldFixture.liechtenstein], formats: "[directory, mbtiles, maplibre-offline]"
                    ).utf8
                ).write(to: URL(fileURLWithPath: folder.join("alps.yaml")))
                build = try Tool.mappack(["build", folder.join("alps.yaml"), "--out", folder.join("Output"), "--cache", folder.join("cache")])
            } catch {
                preconditionFailure("real-world build: \(error)")
            }
        }
    }

    @Test func mapLibreDatabaseHoldsTilesAsMapLibreNativeReadsThem() throws {
        let built = Built.shared
        #expect(built.build.status == 0, "\(built.build.stderr)")
        let check = try RealWorldFixture.check(["maplibre-db", built.maplibre, "--expect-name", "Switzerland"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        // Every stored tile is zlib with compressed = 1: MapLibre Native parses the others as they are.
        let flags = try Tool.run("/usr/bin/sqlite3", ["-readonly", built.maplibre, "SELECT DISTINCT compressed, hex(substr(data, 1, 1)) FROM tiles"])
        #expect(flags.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1|78", "\(flags.stdout)")
    }

    /// The installed store on a device folder: its tile databases are MBTiles files GDAL opens and
    /// whose tiles `mapbox_vector_tile` decodes, with the country where it belongs.
    @Test func theInstalledStoresTilesAreReadByGDALAndDecoded() throws {
        let built = Built.shared
        #expect(built.build.status == 0, "\(built.build.stderr)")
        let storage = built.folder.join("device/storage")
        let install = try Tool.mappack(
            ["store", "install", "--image", built.out + "/alps-2026.12.0", "--storage", storage, "--cache", built.folder.join("device/cache")])
        #expect(install.status == 0, "\(install.stderr)")
        let tiles = storage + "/store/regions/\(RealWorldFixture.switzerland)/tiles.db"
        let check = try RealWorldFixture.check(["mbtiles", tiles, "--expect-layer", "countries", "--expect-name", "Switzerland"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }

    /// From the countries' lowest zoom (6): the seed's overview (zooms 0–5) is not the recipe's.
    @Test func mbtilesHasTheVectorLayersGDALNeedsAndTheRegionsZoomsOnly() throws {
        let built = Built.shared
        #expect(built.build.status == 0, "\(built.build.stderr)")
        let check = try RealWorldFixture.check(
            ["mbtiles", built.mbtiles, "--expect-layer", "countries", "--expect-name", "Switzerland", "--min-zoom", "6"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        // GDAL itself lists the layer with its features.
        let ogrinfo = try Tool.run("/usr/bin/ogrinfo", ["-ro", "-so", "-al", built.mbtiles], timeout: 120)
        #expect(ogrinfo.status == 0 && ogrinfo.stdout.contains("Layer name: countries"), "\(ogrinfo.stdout)\(ogrinfo.stderr)")
        let zooms = try Tool.run("/usr/bin/sqlite3", ["-readonly", built.mbtiles, "SELECT min(zoom_level) FROM tiles"])
        #expect(zooms.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "6")
    }

    @Test(arguments: [6, 2])
    func mapLibreNativeDrawsTheMBTilesWithTheStylesColours(zoom: Int) throws {
        let built = Built.shared
        #expect(built.build.status == 0, "\(built.build.stderr)")
        // The world holds three countries: everywhere else the style's background (water) shows.
        // Below the countries' zooms nothing is drawn: the overview is the cache seed's, not the file's.
        var expectations = ["--expect", zoom == 6 ? "8.2,46.8=CH" : "8.2,46.8=water"]
        if zoom == 6 {
            expectations += ["--expect", "9.53,47.14=LI", "--expect", "10.7,47.15=AT", "--expect", "7.5,45.4=water"]
        } else {
            expectations += ["--expect=-30,40=water"]
        }
        let png = built.folder.join("render-z\(zoom).png")
        let render = try RealWorldFixture.check(
            ["render", built.mbtiles, "--lon", zoom == 6 ? "9.5" : "8.8", "--lat", "46.9", "--zoom", String(zoom), "--png", png] + expectations)
        #expect(render.status == 0, "\(render.stdout)\(render.stderr)")
        #expect(FileManager.default.fileExists(atPath: png))
    }

    @Test func mixedTileFormatsAreRefusedNamingTheRegions() throws {
        let world = RealWorldFixture.shared
        let folder = TemporaryFolder("real-mixed")
        // Liechtenstein's tiles say png, Switzerland's pbf.
        #expect(try Tool.run("/bin/cp", ["-a", world.source, folder.join("source")]).status == 0)
        let liTiles = folder.join("source/bundles/europe.western-europe.li.tiles/regions/\(RealWorldFixture.liechtenstein)/tiles.db")
        let update = try Tool.run("/usr/bin/sqlite3", [liTiles, "UPDATE metadata SET value = 'png' WHERE name = 'format'"])
        #expect(update.status == 0, "\(update.stderr)")
        #expect(try Tool.mappack(["publish", folder.join("source"), "--out", folder.join("catalog")]).status == 0)
        try Data(
            world.recipe(
                catalog: folder.join("catalog/catalog.json"), include: [RealWorldFixture.switzerland, RealWorldFixture.liechtenstein],
                formats: "[directory, mbtiles]"
            ).utf8
        ).write(to: URL(fileURLWithPath: folder.join("mixed.yaml")))
        let build = try Tool.mappack(["build", folder.join("mixed.yaml"), "--out", folder.join("Output"), "--cache", folder.join("cache")])
        #expect(build.status == 2, "\(build.stderr)")
        #expect(build.stderr.contains(RealWorldFixture.liechtenstein) && build.stderr.contains("png"), "\(build.stderr)")
        #expect(build.stderr.contains(RealWorldFixture.switzerland) && build.stderr.contains("pbf"), "\(build.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.join("Output/alps-2026.12.0.mbtiles")))
        #expect(!FileManager.default.fileExists(atPath: folder.join("Output/alps-2026.12.0")))
    }
}
