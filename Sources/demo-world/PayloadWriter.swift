import Foundation
import MapIO

/// Writes one bundle folder: SQLite databases and small binary files whose bytes depend only on
/// the seed, the region and the content version, so unchanged bundles are identical across versions.
///
/// Files are not fsynced one by one: the whole world becomes visible by one rename at the end,
/// and a demo world lost to a power cut is simply generated again.
struct PayloadWriter: Sendable {
    /// `<output>/bundles`.
    let bundlesRoot: String
    /// `--seed`.
    let seed: UInt64
    /// `--scale`.
    let scale: Double
    /// `--small-files` (by default `--scale`): how many routing files a region has, per 20–40.
    let smallFiles: Double

    /// Writes the bundle folder of `plan`.
    func write(_ plan: BundlePlan) throws(DemoWorldError) {
        let folder = bundlesRoot + "/" + plan.name
        var unedited: RecordEdits?
        do {
            switch plan.content {
            case .worldOverview:
                try writeWorldOverview(folder + "/overview/world")
            case .regionOverview(let region, let area):
                var random = SeededRandom("overview", region, seed: seed)
                try FileSystem.makeDirectories(folder + "/regions/" + region)
                try writeTiles(
                    folder + "/regions/\(region)/overview.db", name: region + " overview", metadata: [("region", region)],
                    firstZoom: 5, area: area, budget: scaled(24 << 10), tileSizes: 512...3072, random: &random, edits: &unedited)
            case .tiles(let region, let version, let large, let area, let edit):
                var random = SeededRandom("tiles", region, version, seed: seed)
                let budget = scaled(random.inRange(22 << 10...44 << 10) * (large ? 10 : 1))
                try FileSystem.makeDirectories(folder + "/regions/" + region)
                var edits = edit.map { RecordEdits($0, "tiles", region, seed: seed) }
                try writeTiles(
                    folder + "/regions/\(region)/tiles.db", name: region,
                    metadata: [("region", region), ("version", edit?.version ?? version)],
                    firstZoom: 8, area: area, budget: budget, tileSizes: 256...2560, random: &random, edits: &edits)
            case .search(let region, let version, let names, let cities, let center, let edit):
                var random = SeededRandom("search", region, version, seed: seed)
                try FileSystem.makeDirectories(folder + "/regions/" + region)
                var edits = edit.map { RecordEdits($0, "search", region, seed: seed) }
                try writeSearch(
                    folder + "/regions/\(region)/search.db", names: names, cities: cities, center: center, random: &random,
                    edits: &edits)
            case .routing(let region):
                var random = SeededRandom("routing", region, seed: seed)
                try writeRouting(folder + "/regions/\(region)/routing", random: &random)
            case .border(let path):
                var random = SeededRandom("border", path, seed: seed)
                try FileSystem.makeDirectories(folder + "/" + path)
                let area = PayloadWriter.tileBounds(zoom: 10, x: random.below(1 << 10), y: random.below(1 << 10))
                try writeTiles(
                    folder + "/\(path)/tiles.db", name: path, metadata: [("border", path)], firstZoom: 10, area: area,
                    budget: scaled(16 << 10), tileSizes: 256...2048, random: &random, edits: &unedited)
            }
        } catch let error as DemoWorldError {
            throw error
        } catch let error as FileError {
            throw DemoWorldError.file(error)
        } catch let error as SQLiteError {
            throw DemoWorldError.sqlite(error)
        } catch {
            throw DemoWorldError.bundle(name: plan.name, reason: "\(error)")
        }
    }

    private func scaled(_ bytes: Int) -> Int { max(1, Int((Double(bytes) * scale).rounded())) }

    /// A fresh database with settings that make its bytes a function of what is inserted:
    /// fixed page size, no journal (nothing to roll back into on a freshly made file).
    private func createDatabase(_ path: String) throws(SQLiteError) -> SQLiteDatabase {
        let database = try SQLiteDatabase(path: path)
        try database.execute("PRAGMA page_size=4096; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;")
        return database
    }

    /// Tiles over `area` in an MBTiles 1.3 database (`metadata`, and `tiles` with TMS rows), zoom after
    /// zoom from `firstZoom`, until `budget` blob bytes are written. A tile's bytes start with its
    /// address: 0x1A, the zoom, then x and y (XYZ, y down from the north) as little-endian UInt32.
    /// With `edits`, every tile is first drawn as without them (so sizes and layout stay the base's)
    /// and the tiles the edits pick get new bytes after their address.
    private func writeTiles(
        _ path: String, name: String, metadata: [(String, String)], firstZoom: Int, area: BundlePlan.TileArea,
        budget: Int, tileSizes: ClosedRange<Int>, random: inout SeededRandom, edits: inout RecordEdits?
    ) throws {
        var rows: [[SQLValue]] = []
        var drawn: [(size: Int, header: [UInt8])] = []
        var written = 0
        var zoom = firstZoom
        pyramid: while zoom < 22 {
            let (xs, ys) = PayloadWriter.tileRange(area, zoom: zoom)
            for y in ys {
                for x in xs {
                    let size = min(random.inRange(tileSizes), max(budget - written, 16))
                    let header: [UInt8] = [0x1A, UInt8(zoom)] + littleEndian(UInt32(x)) + littleEndian(UInt32(y))
                    let blob = SyntheticBytes.make(count: size, header: header, noise: 18, random: &random)
                    if edits != nil { drawn.append((size, header)) }
                    let tmsRow = (1 << zoom) - 1 - y
                    rows.append([.integer(Int64(zoom)), .integer(Int64(x)), .integer(Int64(tmsRow)), .blob(Data(blob))])
                    written += size
                    if written >= budget { break pyramid }
                }
            }
            zoom += 1
        }
        if var stream = edits {
            for index in stream.pick(among: rows.count) {
                rows[index][3] = .blob(
                    Data(
                        SyntheticBytes.make(
                            count: drawn[index].size, header: drawn[index].header, noise: 18,
                            random: &stream.random)))
            }
            edits = stream
        }
        let database = try createDatabase(path)
        try database.execute(
            """
            CREATE TABLE metadata(name TEXT, value TEXT);
            CREATE UNIQUE INDEX metadata_name ON metadata(name);
            CREATE TABLE tiles(zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
            CREATE UNIQUE INDEX tile_index ON tiles(zoom_level, tile_column, tile_row);
            """)
        let maxZoom = min(zoom, 21)
        let centerLon = (area.west + area.east) / 2
        let centerLat = (area.south + area.north) / 2
        let meta =
            ([
                ("name", name), ("format", PayloadWriter.tileMediaType), ("type", "baselayer"),
                ("bounds", [area.west, area.south, area.east, area.north].map(PayloadWriter.degrees).joined(separator: ",")),
                ("center", "\(PayloadWriter.degrees(centerLon)),\(PayloadWriter.degrees(centerLat)),\(firstZoom)"),
                ("minzoom", "\(firstZoom)"), ("maxzoom", "\(maxZoom)"), ("description", "demo-world synthetic tiles"),
            ] + metadata)
            .map { [SQLValue.text($0.0), .text($0.1)] }
        try database.transaction {
            try database.executeMany("INSERT INTO metadata(name, value) VALUES (?, ?)", meta)
            try database.executeMany("INSERT INTO tiles(zoom_level, tile_column, tile_row, tile_data) VALUES (?, ?, ?, ?)", rows)
        }
    }

    /// The media type of the demo world's tiles (MBTiles' `format`: not an image or vector format).
    static let tileMediaType = "application/vnd.mappack.demo-tile"

    private static func degrees(_ value: Double) -> String { String(format: "%.6f", value) }

    /// The XYZ tile columns and rows covering `area` at `zoom` (Web Mercator, latitudes clamped to ±85.0511).
    static func tileRange(_ area: BundlePlan.TileArea, zoom: Int) -> (ClosedRange<Int>, ClosedRange<Int>) {
        let count = 1 << zoom
        func column(_ lon: Double) -> Int { min(max(Int(((lon + 180) / 360 * Double(count)).rounded(.down)), 0), count - 1) }
        func row(_ lat: Double) -> Int {
            let radians = min(max(lat, -85.0511), 85.0511) * .pi / 180
            return min(max(Int(((1 - log(tan(radians) + 1 / cos(radians)) / .pi) / 2 * Double(count)).rounded(.down)), 0), count - 1)
        }
        let west = min(area.west, area.east)
        let east = max(area.west, area.east)
        let south = min(area.south, area.north)
        let north = max(area.south, area.north)
        return (column(west)...column(east), row(north)...row(south))
    }

    /// The bounds of the XYZ tile `x`, `y` at `zoom`.
    static func tileBounds(zoom: Int, x: Int, y: Int) -> BundlePlan.TileArea {
        let count = Double(1 << zoom)
        func lon(_ x: Double) -> Double { x / count * 360 - 180 }
        func lat(_ y: Double) -> Double { atan(sinh(.pi * (1 - 2 * y / count))) * 180 / .pi }
        // Nudged inside so the range of the bounds is the one tile.
        let inset = 1e-9
        return BundlePlan.TileArea(
            west: lon(Double(x)) + inset, south: lat(Double(y + 1)) + inset,
            east: lon(Double(x + 1)) - inset, north: lat(Double(y)) - inset)
    }

    /// The region's names in every language, its cities and synthetic points of interest around its centre.
    private func writeSearch(
        _ path: String, names: [String: String], cities: [String], center: [Double],
        random: inout SeededRandom, edits: inout RecordEdits?
    ) throws {
        // The wrapper binds no floating-point values, so positions go in as microdegrees and SQLite divides.
        let lat = Int64((center[0] * 1_000_000).rounded())
        let lon = Int64((center[1] * 1_000_000).rounded())
        var rows: [[SQLValue]] = names.keys.sorted().compactMap { language in
            names[language].map { [.text($0), .integer(lat), .integer(lon)] }
        }
        func near(_ name: String, spread: Int) -> [SQLValue] {
            [.text(name), .integer(lat + Int64(random.inRange(-spread...spread))), .integer(lon + Int64(random.inRange(-spread...spread)))]
        }
        for city in cities { rows.append(near(city, spread: 300_000)) }
        for _ in 0..<max(8, Int((150 * scale).rounded())) { rows.append(near(PlaceNames.feature(&random), spread: 500_000)) }
        // Edited places moved: same name, new position.
        if var stream = edits {
            for index in stream.pick(among: rows.count) {
                rows[index][1] = .integer(lat + Int64(stream.random.inRange(-500_000...500_000)))
                rows[index][2] = .integer(lon + Int64(stream.random.inRange(-500_000...500_000)))
            }
            edits = stream
        }

        let database = try createDatabase(path)
        try database.execute(
            """
            CREATE TABLE places(name TEXT, lat REAL, lon REAL);
            CREATE INDEX places_name ON places(name);
            """)
        try database.transaction {
            try database.executeMany("INSERT INTO places(name, lat, lon) VALUES (?, ? / 1000000.0, ? / 1000000.0)", rows)
        }
    }

    /// Many small graph files in a nested tree: the "thousands of tiny files" case for packers and stores.
    private func writeRouting(_ folder: String, random: inout SeededRandom) throws(FileError) {
        let count = max(1, Int((Double(random.inRange(20...40)) * smallFiles).rounded()))
        var made: Set<String> = []
        for index in 0..<count {
            let directory = "\(folder)/\(index % 3)/\(index / 3 % 4)"
            if made.insert(directory).inserted { try FileSystem.makeDirectories(directory) }
            let bytes = SyntheticBytes.make(count: random.inRange(200...3072), header: Array("RTG1".utf8), noise: 14, random: &random)
            try writeFile("\(directory)/\(index).rt", bytes)
        }
    }

    /// World overview: low-zoom tiles, a small style document, and an empty notices file (the zero-byte case).
    private func writeWorldOverview(_ folder: String) throws {
        var random = SeededRandom("world", seed: seed)
        var unedited: RecordEdits?
        try FileSystem.makeDirectories(folder)
        try writeTiles(
            folder + "/tiles.db", name: "world overview", metadata: [("region", WorldTree.worldID)], firstZoom: 0,
            area: BundlePlan.TileArea(west: -180, south: -85.0511, east: 180, north: 85.0511),
            budget: scaled(256 << 10), tileSizes: 1024...6144, random: &random, edits: &unedited)
        let style = """
            {"format":"demo-style/1","layers":[{"id":"water","color":"#a0c8f0"},{"id":"land","color":"#f2efe9"},\
            {"id":"boundaries","color":"#9e9cab"},{"id":"roads","color":"#ffffff"}],"sources":{"tiles":"tiles.db"}}

            """
        try writeFile(folder + "/style.json", Array(style.utf8))
        try writeFile(folder + "/notices.txt", [])
    }

    private func littleEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    private func writeFile(_ path: String, _ bytes: [UInt8]) throws(FileError) {
        let file = try WritableFile(path: path, exclusive: true)
        try file.write(Data(bytes))
        try file.close(sync: false)
    }
}
