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

    /// Writes the bundle folder of `plan`.
    func write(_ plan: BundlePlan) throws(DemoWorldError) {
        let folder = bundlesRoot + "/" + plan.name
        do {
            switch plan.content {
            case .worldOverview:
                try writeWorldOverview(folder + "/overview/world")
            case .regionOverview(let region, let origin):
                var random = SeededRandom("overview", region, seed: seed)
                try FileSystem.makeDirectories(folder + "/regions/" + region)
                try writeTiles(folder + "/regions/\(region)/overview.db", metadata: [("region", region)],
                               firstZoom: 5, origin: (origin.x >> 3, origin.y >> 3), budget: scaled(24 << 10),
                               tileSizes: 512...3072, random: &random)
            case .tiles(let region, let version, let large, let origin):
                var random = SeededRandom("tiles", region, version, seed: seed)
                let budget = scaled(random.inRange(22 << 10...44 << 10) * (large ? 10 : 1))
                try FileSystem.makeDirectories(folder + "/regions/" + region)
                try writeTiles(folder + "/regions/\(region)/tiles.db", metadata: [("region", region), ("version", version)],
                               firstZoom: 8, origin: (origin.x, origin.y), budget: budget, tileSizes: 256...2560, random: &random)
            case .search(let region, let version, let names, let cities, let center):
                var random = SeededRandom("search", region, version, seed: seed)
                try FileSystem.makeDirectories(folder + "/regions/" + region)
                try writeSearch(folder + "/regions/\(region)/search.db", names: names, cities: cities, center: center, random: &random)
            case .routing(let region):
                var random = SeededRandom("routing", region, seed: seed)
                try writeRouting(folder + "/regions/\(region)/routing", random: &random)
            case .border(let path):
                var random = SeededRandom("border", path, seed: seed)
                try FileSystem.makeDirectories(folder + "/" + path)
                let origin = (random.below(1 << 10), random.below(1 << 10))
                try writeTiles(folder + "/\(path)/tiles.db", metadata: [("border", path)], firstZoom: 10, origin: origin,
                               budget: scaled(16 << 10), tileSizes: 256...2048, random: &random)
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

    /// A tile pyramid from `origin` at `firstZoom` downwards, zoom by zoom, until `budget` blob bytes are written.
    private func writeTiles(_ path: String, metadata: [(String, String)], firstZoom: Int, origin: (Int, Int),
                            budget: Int, tileSizes: ClosedRange<Int>, random: inout SeededRandom) throws {
        var rows: [[SQLValue]] = []
        var written = 0
        var zoom = firstZoom
        pyramid: while zoom < 22 {
            let side = 1 << (zoom - firstZoom)
            for dy in 0..<side {
                for dx in 0..<side {
                    let x = origin.0 * side + dx, y = origin.1 * side + dy
                    let size = min(random.inRange(tileSizes), max(budget - written, 16))
                    let header: [UInt8] = [0x1A, UInt8(zoom)] + littleEndian(UInt32(x)) + littleEndian(UInt32(y))
                    let blob = SyntheticBytes.make(count: size, header: header, noise: 18, random: &random)
                    rows.append([.integer(Int64(zoom)), .integer(Int64(x)), .integer(Int64(y)), .blob(Data(blob))])
                    written += size
                    if written >= budget { break pyramid }
                }
            }
            zoom += 1
        }
        let database = try createDatabase(path)
        try database.execute("""
            CREATE TABLE metadata(name TEXT PRIMARY KEY, value TEXT);
            CREATE TABLE tiles(zoom INTEGER, x INTEGER, y INTEGER, data BLOB, PRIMARY KEY(zoom, x, y));
            """)
        let meta = ([("format", "demo-tiles/1"), ("minzoom", "\(firstZoom)"), ("maxzoom", "\(zoom)")] + metadata)
            .map { [SQLValue.text($0.0), .text($0.1)] }
        try database.transaction {
            try database.executeMany("INSERT INTO metadata(name, value) VALUES (?, ?)", meta)
            try database.executeMany("INSERT INTO tiles(zoom, x, y, data) VALUES (?, ?, ?, ?)", rows)
        }
    }

    /// The region's names in every language, its cities and synthetic points of interest around its centre.
    private func writeSearch(_ path: String, names: [String: String], cities: [String], center: [Double],
                             random: inout SeededRandom) throws {
        // The wrapper binds no floating-point values, so positions go in as microdegrees and SQLite divides.
        let lat = Int64((center[0] * 1_000_000).rounded()), lon = Int64((center[1] * 1_000_000).rounded())
        var rows: [[SQLValue]] = names.keys.sorted().compactMap { language in
            names[language].map { [.text($0), .integer(lat), .integer(lon)] }
        }
        func near(_ name: String, spread: Int) -> [SQLValue] {
            [.text(name), .integer(lat + Int64(random.inRange(-spread...spread))), .integer(lon + Int64(random.inRange(-spread...spread)))]
        }
        for city in cities { rows.append(near(city, spread: 300_000)) }
        for _ in 0..<max(8, Int((150 * scale).rounded())) { rows.append(near(PlaceNames.feature(&random), spread: 500_000)) }

        let database = try createDatabase(path)
        try database.execute("""
            CREATE TABLE places(name TEXT, lat REAL, lon REAL);
            CREATE INDEX places_name ON places(name);
            """)
        try database.transaction {
            try database.executeMany("INSERT INTO places(name, lat, lon) VALUES (?, ? / 1000000.0, ? / 1000000.0)", rows)
        }
    }

    /// Many small graph files in a nested tree: the "thousands of tiny files" case for packers and stores.
    private func writeRouting(_ folder: String, random: inout SeededRandom) throws(FileError) {
        let count = max(1, Int((Double(random.inRange(20...40)) * scale).rounded()))
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
        try FileSystem.makeDirectories(folder)
        try writeTiles(folder + "/tiles.db", metadata: [("region", WorldTree.worldID)], firstZoom: 0, origin: (0, 0),
                       budget: scaled(256 << 10), tileSizes: 1024...6144, random: &random)
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
