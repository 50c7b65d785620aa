import Foundation
import TestSupport
import Testing

/// Issue 45 items 2-4: `mappack import --tiles http://…/x.pmtiles` reads the archive by HTTP Range
/// requests, and `--shard I/N` of a PMTiles archive reads only its share of the tiles: N shards run
/// as N separate processes against one nginx together fetch the archive about once, each well under
/// a third of it, and their merge is byte for byte the unsharded import of the local file. A server
/// that ignores Range, an archive that changes between requests, a missing URL and a hostile archive
/// are refused as the rules say; a dropped connection or a 503 is tried again and resumed.
@Suite struct ImportRangedTests {
    /// Natural Earth's Europe (the countries of `ImportShardTests`) at zooms 0-10, as MBTiles and as a
    /// PMTiles archive with leaf directories of 256 entries; and a synthetic archive over Europe's box
    /// (every tile of zooms 0-9, 256-1280 random bytes each, so a tile's bytes do not depend on what
    /// it shows), both served by nginx.
    final class Served: @unchecked Sendable {
        static let shared = Served()
        let folder = TemporaryFolder("import-ranged")
        var inputs: String { folder.join("inputs") }
        var archive: String { folder.join("www/europe.pmtiles") }
        var synthetic: String { folder.join("www/synthetic.pmtiles") }
        let made: [Tool.Result]

        /// Writes the synthetic MBTiles at argv[1] (Python's standard library only).
        static let syntheticWriter = """
            import math, random, sqlite3, sys
            west, south, east, north = -25.0, 34.0, 45.0, 72.0
            def tile(lon, lat, z):
                n = 1 << z
                x = int((lon + 180) / 360 * n)
                y = int((1 - math.log(math.tan(math.radians(lat)) + 1 / math.cos(math.radians(lat))) / math.pi) / 2 * n)
                return min(max(x, 0), n - 1), min(max(y, 0), n - 1)
            rng = random.Random(45)
            db = sqlite3.connect(sys.argv[1])
            db.executescript("CREATE TABLE metadata (name TEXT, value TEXT); CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);")
            db.executemany("INSERT INTO metadata VALUES (?, ?)", [("name", "synthetic"), ("format", "png"), ("minzoom", "0"), ("maxzoom", "9"), ("bounds", f"{west},{south},{east},{north}")])
            for z in range(10):
                x0, y0 = tile(west, north, z)
                x1, y1 = tile(east, south, z)
                db.executemany("INSERT INTO tiles VALUES (?, ?, ?, ?)", [(z, x, (1 << z) - 1 - y, rng.randbytes(rng.randint(256, 1280))) for x in range(x0, x1 + 1) for y in range(y0, y1 + 1)])
            db.execute("CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row)")
            db.commit()
            """

        private init() {
            let leaves = """
                import sys
                import pmtiles.writer
                from pmtiles.convert import mbtiles_to_pmtiles
                pmtiles.writer.optimize_directories = lambda entries, target: pmtiles.writer.build_roots_leaves(entries, 256)
                mbtiles_to_pmtiles(sys.argv[1], sys.argv[2], None)
                """
            do {
                try FileManager.default.createDirectory(atPath: folder.join("www"), withIntermediateDirectories: true)
                let inputs = try Tool.run(
                    RealWorldFixture.python,
                    [ImportTests.helper, "inputs", "--out", folder.join("inputs"), "--countries", ImportShardTests.countries, "--max-zoom", "10"],
                    timeout: 600)
                made = [
                    inputs,
                    try Tool.run(
                        RealWorldFixture.python, ["-c", leaves, folder.join("inputs/tiles.mbtiles"), folder.join("www/europe.pmtiles")], timeout: 300),
                    try Tool.run("/usr/bin/python3", ["-c", Self.syntheticWriter, folder.join("synthetic.mbtiles")], timeout: 300),
                    try Tool.run(
                        RealWorldFixture.python, ["-c", leaves, folder.join("synthetic.mbtiles"), folder.join("www/synthetic.pmtiles")], timeout: 300),
                ]
            } catch {
                preconditionFailure("import inputs (run `make venv` first): \(error)")
            }
        }

        /// The import arguments for `tiles`, every run with the same release time.
        func arguments(tiles: String, out: String) -> [String] {
            [
                "import", "--tiles", tiles, "--regions", inputs + "/regions.geojson", "--places", inputs + "/places.geojson", "--catalog",
                "europe", "--map-version", "2026.12.0", "--out", out,
            ]
        }
    }

    static let clock = ["SOURCE_DATE_EPOCH": "1796000000"]

    /// Four shards of the synthetic archive: each fetches at most 0.2 of it (the tiles of its run of
    /// the tile-id order that meet a region, the directories, and the gaps between its runs it reads
    /// to keep the requests few; 0.116 / 0.045 / 0.147 / 0.096 when the runs were cut by count
    /// alone: the runs over sea and Russia, which no region meets, fetch least), together about
    /// what an unsharded import needs; their merge is the unsharded import of the local file. Dealt
    /// whole regions (before runs of the tile order), the bound was 0.3.
    @Test func fourShardsFetchTheirShareOfARangedArchiveAndMergeToTheLocalImportsBytes() throws {
        let served = Served.shared
        for result in served.made { try #require(result.status == 0, "\(result.stdout)\(result.stderr)") }
        let size = try #require(try FileManager.default.attributesOfItem(atPath: served.synthetic)[.size] as? Int)
        #expect(size > 8 << 20, "an archive large enough that its directories are a small part: \(size) bytes")
        #expect(try ImportPMTilesTests.headerField(served.synthetic, at: 48) > 0, "the archive has leaf directories")
        let nginx = try NginxServer(root: served.folder.join("www"))
        let folder = TemporaryFolder("import-ranged-shards")
        let whole = try Tool.mappack(served.arguments(tiles: served.synthetic, out: folder.join("whole")), environment: Self.clock, timeout: 600)
        try #require(whole.status == 0, "\(whole.stderr)")
        let unsharded = try Tool.mappack(
            served.arguments(tiles: nginx.baseURL.absoluteString + "synthetic.pmtiles?whole", out: folder.join("remote")), environment: Self.clock,
            timeout: 600)
        try #require(unsharded.status == 0, "\(unsharded.stderr)")
        let needed = nginx.bytesSent(prefix: "/synthetic.pmtiles?whole")

        // Four processes at once, each in its own folder, each with its own query so nginx's log tells them apart.
        let shards = 4
        let results = Mutex4()
        DispatchQueue.concurrentPerform(iterations: shards) { index in
            let url = nginx.baseURL.absoluteString + "synthetic.pmtiles?shard=\(index + 1)"
            let run = Result {
                try Tool.mappack(
                    served.arguments(tiles: url, out: folder.join("shard-\(index + 1)")) + ["--shard", "\(index + 1)/\(shards)"],
                    environment: Self.clock, timeout: 600)
            }
            results.set(index, run)
        }
        var fetched: [Int] = []
        for index in 0..<shards {
            let run = try results.get(index).get()
            try #require(run.status == 0, "shard \(index + 1): \(run.stderr)")
            let prefix = "/synthetic.pmtiles?shard=\(index + 1)"
            let requests = nginx.wireLog().filter { $0.path == prefix }
            #expect(requests.allSatisfy { $0.status == 206 }, "shard \(index + 1) asked by range only: \(requests.map(\.status))")
            #expect(requests.count <= 400, "shard \(index + 1) coalesced its runs: \(requests.count) requests")
            fetched.append(nginx.bytesSent(prefix: prefix))
        }
        for (index, bytes) in fetched.enumerated() {
            #expect(bytes > 0 && Double(bytes) <= 0.2 * Double(size), "shard \(index + 1) fetched \(bytes) of \(size) bytes: \(fetched)")
        }
        #expect(needed >= size, "unsharded, the whole archive is read once: \(needed) of \(size)")
        #expect(
            Double(fetched.reduce(0, +)) <= 0.6 * Double(size),
            "together the shards fetched about the tiles that meet a region, not the archive N times: \(fetched) of \(size)")

        let merge = try Tool.mappack(["import", "--merge"] + (1...shards).map { folder.join("shard-\($0)") } + ["--out", folder.join("merged")])
        try #require(merge.status == 0, "\(merge.stderr)")
        let diff = try Tool.run("/usr/bin/diff", ["-r", folder.join("whole"), folder.join("merged")], timeout: 120)
        #expect(diff.status == 0, "merged shards differ from the unsharded local import: \(diff.stdout.prefix(2000))")
    }

    @Test func anUnshardedRangedImportGivesTheLocalImportsBytes() throws {
        let served = Served.shared
        for result in served.made { try #require(result.status == 0, "\(result.stdout)\(result.stderr)") }
        let nginx = try NginxServer(root: served.folder.join("www"))
        let folder = TemporaryFolder("import-ranged-whole")
        // No SOURCE_DATE_EPOCH: the release time is the newest input's, the archive's Last-Modified by range.
        let local = try Tool.mappack(served.arguments(tiles: served.archive, out: folder.join("local")), timeout: 600)
        try #require(local.status == 0, "\(local.stderr)")
        let remote = try Tool.mappack(
            served.arguments(tiles: nginx.baseURL.absoluteString + "europe.pmtiles", out: folder.join("remote")), timeout: 600)
        try #require(remote.status == 0, "\(remote.stderr)")
        let diff = try Tool.run("/usr/bin/diff", ["-r", folder.join("local"), folder.join("remote")], timeout: 120)
        #expect(diff.status == 0, "\(diff.stdout.prefix(2000))")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: served.archive)[.size] as? Int)
        let sent = nginx.bytesSent(path: "/europe.pmtiles")
        #expect(sent <= size + 16384, "the whole archive is fetched about once: \(sent) of \(size)")
        #expect(nginx.requests(path: "/europe.pmtiles") <= 64, "runs are coalesced into large ranges")
    }

    /// Faults the fault server injects, what the import then does (exit status) and says.
    @Test(arguments: [
        ("ignore-range", "", 2, "does not honour Range"),
        ("change", "&skip=1", 1, "changed"),
        ("status", "&code=503&times=2", 0, ""),
        ("reset", "&after=20000&times=2&skip=1", 0, ""),
        ("status", "&code=403", 2, "HTTP status 403"),
    ])
    func aServerThatMisbehavesIsRefusedOrRetried(fault: String, parameters: String, status: Int32, message: String) throws {
        let served = Served.shared
        for result in served.made { try #require(result.status == 0, "\(result.stdout)\(result.stderr)") }
        let server = try FaultServer(root: served.folder.join("www"))
        let folder = TemporaryFolder("import-ranged-fault")
        let url = server.url("europe.pmtiles").absoluteString + "?fault=\(fault)" + parameters
        let run = try Tool.mappack(served.arguments(tiles: url, out: folder.join("out")) + ["--shard", "2/4"], environment: Self.clock, timeout: 600)
        #expect(!run.timedOut)
        #expect(run.status == status, "\(fault): \(run.status) \(run.stderr)")
        if status != 0 {
            #expect(run.stderr.contains(url), "the message names the URL: \(run.stderr)")
            #expect(run.stderr.contains(message), "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: folder.join("out")))
        }
    }

    @Test func aMissingURLIsBadInputNamingIt() throws {
        let folder = TemporaryFolder("import-ranged-missing")
        try FileManager.default.createDirectory(atPath: folder.join("www"), withIntermediateDirectories: true)
        let nginx = try NginxServer(root: folder.join("www"))
        let url = nginx.baseURL.absoluteString + "nothing.pmtiles"
        let run = try ImportHostileTests.importBounded(folder, tiles: url)
        #expect(run.status == 2, "\(run.status) \(run.stderr)")
        #expect(run.stderr.contains(url) && run.stderr.contains("404"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.join("out")))
    }

    /// The bounds `ImportHostileTests` holds a local archive to hold for one read by range too,
    /// sharded or not.
    @Test(arguments: [
        ("run", "the entry for tile id 0 (run length 4000000000)"),
        ("fan-out", "lies outside the range its parent's entry covers"),
        ("entries", "holds 8000000 entries"),
        ("leaf-bomb", "the directories inflate to more than"),
    ])
    func aHostileRangedArchiveIsBoundedAsALocalOne(shape: String, message: String) throws {
        let folder = TemporaryFolder("import-ranged-hostile")
        try FileManager.default.createDirectory(atPath: folder.join("www"), withIntermediateDirectories: true)
        let made = try Tool.run(
            "/usr/bin/python3", ["-c", ImportHostileTests.pmtilesWriter, shape, folder.join("www/\(shape).pmtiles")], timeout: 120)
        try #require(made.status == 0, "\(made.stderr)")
        let nginx = try NginxServer(root: folder.join("www"))
        let url = nginx.baseURL.absoluteString + "\(shape).pmtiles"
        let run = try ImportHostileTests.importBounded(folder, tiles: url)
        ImportHostileTests.expectRefused(run, folder, file: url + ": not a usable PMTiles v3 archive", saying: [message], shape)
    }
}

/// Four results set from concurrent threads.
private final class Mutex4: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int: Result<Tool.Result, any Error>] = [:]
    func set(_ index: Int, _ value: Result<Tool.Result, any Error>) { lock.withLock { values[index] = value } }
    func get(_ index: Int) -> Result<Tool.Result, any Error> { lock.withLock { values[index]! } }
}
