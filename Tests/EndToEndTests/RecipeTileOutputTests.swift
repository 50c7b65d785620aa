import Foundation
import TestSupport
import Testing

/// Issue 42 item 5: the tile outputs follow the recipe, not its cache seed. Two recipes over the
/// real world, both with `cacheSeed: {include: [world]}` (the seed holds the world overview, zooms
/// 0–5, and Switzerland's tiles): Austria and Liechtenstein included one by one, and their parent
/// `europe/western-europe` included with Switzerland excluded. The `.mbtiles`, `.pmtiles` and
/// `.maplibre.db` hold exactly the tiles of Austria's and Liechtenstein's tile databases in the
/// store, one MapLibre offline region per `include` entry, bounds inside the two countries' boxes (not
/// the parent's, which holds Switzerland), a centre inside Austria at a zoom the tiles have. Read by
/// GDAL (`ogrinfo`), the PyPI `pmtiles` reader, MapLibre Native (pymgl) and `sqlite3`.
@Suite struct RecipeTileOutputTests {
    static let image = "alps-2026.12.0"
    /// The countries whose tiles every recipe here resolves to.
    static let countries = [RealWorldFixture.austria, RealWorldFixture.liechtenstein]

    /// The recipes: `include` and `exclude`, and for each `include` entry the countries it brings.
    enum Recipe: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case countries
        case parentMinusSwitzerland

        var include: [String] {
            switch self {
            case .countries: RecipeTileOutputTests.countries
            case .parentMinusSwitzerland: ["europe/western-europe"]
            }
        }
        var exclude: [String] { self == .countries ? [] : [RealWorldFixture.switzerland] }
        /// The countries each `include` entry brings (one MapLibre offline region each).
        var brought: [String: [String]] {
            switch self {
            case .countries: Dictionary(uniqueKeysWithValues: RecipeTileOutputTests.countries.map { ($0, [$0]) })
            case .parentMinusSwitzerland: ["europe/western-europe": RecipeTileOutputTests.countries]
            }
        }
        var testDescription: String { rawValue }
        var built: Built { self == .countries ? Built.countries : Built.parentMinusSwitzerland }
    }

    /// One build of every tile output, and what the catalog and the store say it should hold.
    final class Built: @unchecked Sendable {
        static let countries = Built(.countries)
        static let parentMinusSwitzerland = Built(.parentMinusSwitzerland)
        let folder: TemporaryFolder
        let build: Tool.Result
        /// The catalog's `bbox` of each country, `[west, south, east, north]`.
        let boxes: [String: [Double]]

        var out: String { folder.join("Output") }
        func output(_ suffix: String) -> String { out + "/" + RecipeTileOutputTests.image + suffix }

        private init(_ recipe: Recipe) {
            let world = RealWorldFixture.shared
            folder = TemporaryFolder("recipe-tiles-\(recipe.rawValue)")
            do {
                let path = folder.join("alps.yaml")
                let exclude = recipe.exclude.isEmpty ? "" : "\n  exclude: [\(recipe.exclude.joined(separator: ", "))]"
                try """
                name: alps
                catalog: \(world.catalog)
                regions:
                  include: [\(recipe.include.joined(separator: ", "))]\(exclude)
                cacheSeed:
                  include: [world]
                output:
                  formats: [directory, mbtiles, pmtiles, maplibre-offline]
                """.write(toFile: path, atomically: true, encoding: .utf8)
                build = try Tool.mappack(["build", path, "--out", folder.join("Output"), "--cache", folder.join("cache")], timeout: 600)
                let catalog = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: world.catalog))) as? [String: Any]
                var boxes: [String: [Double]] = [:]
                for region in catalog?["regions"] as? [[String: Any]] ?? [] {
                    if let id = region["id"] as? String, RecipeTileOutputTests.countries.contains(id), let box = region["bbox"] as? [Double] {
                        boxes[id] = box
                    }
                }
                self.boxes = boxes
            } catch {
                preconditionFailure("recipe tile outputs build: \(error)")
            }
        }

        /// The union of `ids`' boxes (every country's by default).
        func union(_ ids: [String] = RecipeTileOutputTests.countries) -> [Double] {
            let all = ids.compactMap { boxes[$0] }
            return [all.map { $0[0] }.min()!, all.map { $0[1] }.min()!, all.map { $0[2] }.max()!, all.map { $0[3] }.max()!]
        }

        /// Whether `lon`/`lat` lies in one country's box.
        func insideARegion(lon: Double, lat: Double) -> Bool {
            boxes.values.contains { $0[0] <= lon && lon <= $0[2] && $0[1] <= lat && lat <= $0[3] }
        }

        /// Every tile of `ids`' own tile databases in the image's store, as XYZ "z/x/y".
        func regionTiles(_ ids: [String] = RecipeTileOutputTests.countries) throws -> Set<String> {
            var all = Set<String>()
            for id in ids {
                let database = out + "/" + RecipeTileOutputTests.image + "/store/regions/\(id)/tiles.db"
                #expect(FileManager.default.fileExists(atPath: database), "\(database)")
                all.formUnion(
                    try RecipeTileOutputTests.sqlite(
                        database, "SELECT zoom_level || '/' || tile_column || '/' || ((1 << zoom_level) - 1 - tile_row) FROM tiles"))
            }
            return all
        }
    }

    static func sqlite(_ database: String, _ sql: String) throws -> [String] {
        let result = try Tool.run("/usr/bin/sqlite3", ["-readonly", database, sql], timeout: 60)
        #expect(result.status == 0, "\(sql): \(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    /// `inner` lies inside `outer` (both `[west, south, east, north]`), to the metadata's rounding.
    static func within(_ inner: [Double], _ outer: [Double]) -> Bool {
        let slack = 1e-5
        return inner.count == 4 && inner[0] >= outer[0] - slack && inner[1] >= outer[1] - slack && inner[2] <= outer[2] + slack
            && inner[3] <= outer[3] + slack && inner[0] < inner[2] && inner[1] < inner[3]
    }

    /// The MBTiles as GDAL reads it: its metadata items and the layer's extent back in degrees.
    struct GDALView {
        var metadata: [String: String] = [:]
        var extent: [Double] = []
    }

    static func gdal(_ mbtiles: String) throws -> GDALView {
        let result = try Tool.run("/usr/bin/ogrinfo", ["-ro", "-so", "-al", mbtiles], timeout: 120)
        #expect(result.status == 0, "\(result.stderr)")
        var view = GDALView()
        var inMetadata = false
        for line in result.stdout.split(separator: "\n").map(String.init) {
            if line == "Metadata:" {
                inMetadata = true
            } else if inMetadata, line.hasPrefix("  "), let equals = line.firstIndex(of: "=") {
                view.metadata[line[..<equals].trimmingCharacters(in: .whitespaces)] = String(line[line.index(after: equals)...])
            } else {
                inMetadata = false
            }
            // "Extent: (x1, y1) - (x2, y2)" in web mercator metres.
            if line.hasPrefix("Extent:"), view.extent.isEmpty {
                let numbers = line.dropFirst("Extent:".count).replacingOccurrences(of: " - ", with: " ")
                    .split { $0 == " " || $0 == "," || $0 == "(" || $0 == ")" }.compactMap { Double($0) }
                guard numbers.count == 4 else { continue }
                let radius = 6_378_137.0
                func lon(_ x: Double) -> Double { x / radius * 180 / .pi }
                func lat(_ y: Double) -> Double { atan(sinh(y / radius)) * 180 / .pi }
                view.extent = [lon(numbers[0]), lat(numbers[1]), lon(numbers[2]), lat(numbers[3])]
            }
        }
        return view
    }

    @Test(arguments: Recipe.allCases)
    func mbtilesHoldsOnlyTheRecipesRegionsTilesAsGDALReadsThem(recipe: Recipe) throws {
        let built = recipe.built
        #expect(built.build.status == 0, "\(built.build.stderr)")
        let mbtiles = built.output(".mbtiles")
        let expected = try built.regionTiles()
        #expect(expected.count > 2)
        let tiles = Set(
            try Self.sqlite(mbtiles, "SELECT zoom_level || '/' || tile_column || '/' || ((1 << zoom_level) - 1 - tile_row) FROM tiles"))
        #expect(
            tiles == expected, "\(tiles.subtracting(expected).count) tiles not of the recipe's regions, \(expected.subtracting(tiles).count) missing")
        let zooms = expected.compactMap { $0.split(separator: "/").first.flatMap { Int($0) } }

        let gdal = try Self.gdal(mbtiles)
        #expect(gdal.metadata["minzoom"] == "\(zooms.min()!)" && gdal.metadata["maxzoom"] == "\(zooms.max()!)", "\(gdal.metadata)")
        let bounds = (gdal.metadata["bounds"] ?? "").split(separator: ",").compactMap { Double($0) }
        #expect(Self.within(bounds, built.union()), "bounds \(bounds), regions \(built.union())")
        #expect(Self.within(gdal.extent, built.union()), "GDAL's extent \(gdal.extent), regions \(built.union())")
        let center = (gdal.metadata["center"] ?? "").split(separator: ",").compactMap { Double($0) }
        try #require(center.count == 3, "center \(gdal.metadata["center"] ?? "none")")
        #expect(built.insideARegion(lon: center[0], lat: center[1]), "centre \(center) is in neither \(built.boxes)")
        #expect((Double(zooms.min()!)...Double(zooms.max()!)).contains(center[2]), "centre zoom \(center[2])")

        let check = try RealWorldFixture.check(["mbtiles", mbtiles, "--expect-layer", "countries", "--expect-name", "Austria"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }

    @Test(arguments: Recipe.allCases)
    func pmtilesHoldsTheSameTilesWithTheRegionsBoundsAndCentre(recipe: Recipe) throws {
        let built = recipe.built
        #expect(built.build.status == 0, "\(built.build.stderr)")
        let pmtiles = built.output(".pmtiles")
        let read = try RealWorldFixture.check(["pmtiles-contents", pmtiles])
        #expect(read.status == 0, "\(read.stdout)\(read.stderr)")
        let contents = try #require(
            try JSONSerialization.jsonObject(with: Data(read.stdout.utf8)) as? [String: Any], "\(read.stdout)")
        let expected = try built.regionTiles()
        let tiles = Set(contents["tiles"] as? [String] ?? [])
        #expect(
            tiles == expected, "\(tiles.subtracting(expected).count) tiles not of the recipe's regions, \(expected.subtracting(tiles).count) missing")
        let zooms = expected.compactMap { $0.split(separator: "/").first.flatMap { Int($0) } }
        #expect(contents["min_zoom"] as? Int == zooms.min() && contents["max_zoom"] as? Int == zooms.max(), "\(contents)")
        let bounds = contents["bounds"] as? [Double] ?? []
        #expect(Self.within(bounds, built.union()), "bounds \(bounds), regions \(built.union())")
        let center = contents["center"] as? [Double] ?? []
        try #require(center.count == 2)
        #expect(built.insideARegion(lon: center[0], lat: center[1]), "centre \(center) is in neither \(built.boxes)")
        let centerZoom = contents["center_zoom"] as? Int ?? -1
        #expect((zooms.min()!...zooms.max()!).contains(centerZoom), "centre zoom \(centerZoom)")

        let same = try RealWorldFixture.check(["pmtiles-matches", built.output(".mbtiles"), pmtiles])
        #expect(same.status == 0, "\(same.stdout)\(same.stderr)")
    }

    @Test(arguments: Recipe.allCases)
    func mapLibreDatabaseHasOneRegionPerIncludeWithOnlyItsTiles(recipe: Recipe) throws {
        let built = recipe.built
        #expect(built.build.status == 0, "\(built.build.stderr)")
        let database = built.output(".maplibre.db")
        let check = try RealWorldFixture.check(["maplibre-db", database, "--expect-name", "Austria"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        let descriptions = try Self.sqlite(database, "SELECT json_extract(CAST(description AS TEXT), '$.id') FROM regions ORDER BY id")
        #expect(descriptions == recipe.include.sorted(), "regions \(descriptions)")
        let tiles = Set(try Self.sqlite(database, "SELECT z || '/' || x || '/' || y FROM tiles"))
        let expected = try built.regionTiles()
        #expect(
            tiles == expected, "\(tiles.subtracting(expected).count) tiles not of the recipe's regions, \(expected.subtracting(tiles).count) missing")
        for (id, countries) in recipe.brought {
            let row = try Self.sqlite(
                database,
                """
                SELECT json_extract(definition, '$.bounds'), json_extract(definition, '$.min_zoom'), json_extract(definition, '$.max_zoom')
                FROM regions WHERE json_extract(CAST(description AS TEXT), '$.id') = '\(id)'
                """)
            let parts = try #require(row.first, "no region \(id)").split(separator: "|").map(String.init)
            let bounds = try JSONSerialization.jsonObject(with: Data(parts[0].utf8)) as? [Double] ?? []
            // MapLibre's order: south, west, north, east.
            let box = bounds.count == 4 ? [bounds[1], bounds[0], bounds[3], bounds[2]] : []
            #expect(Self.within(box, built.union(countries)), "\(id): bounds \(box), its countries \(built.union(countries))")
            let zooms = try built.regionTiles(countries).compactMap { $0.split(separator: "/").first.flatMap { Int($0) } }
            #expect(Double(parts[1]) == Double(zooms.min()!) && Double(parts[2]) == Double(zooms.max()!), "\(id): zooms \(parts)")
        }
    }

    /// MapLibre Native opened at the `.mbtiles`' own centre and zoom shows Austria there.
    @Test(arguments: Recipe.allCases)
    func mapLibreNativeOpenedAtTheCentreShowsTheRegion(recipe: Recipe) throws {
        let built = recipe.built
        #expect(built.build.status == 0, "\(built.build.stderr)")
        let mbtiles = built.output(".mbtiles")
        let center = try Self.sqlite(mbtiles, "SELECT value FROM metadata WHERE name = 'center'").first?.split(separator: ",").map(String.init) ?? []
        try #require(center.count == 3, "center \(center)")
        let render = try RealWorldFixture.check(
            [
                "render", mbtiles, "--lon", center[0], "--lat", center[1], "--zoom", center[2], "--expect-rgb", "AT", "--png",
                built.folder.join("centre.png"),
            ])
        #expect(render.status == 0, "\(render.stdout)\(render.stderr)")
    }
}
