import Foundation
import TestSupport
import Testing

/// Issue 45 item 2 (and issue 43's "`--shard 3` split Europe 11.6k / 3.0k / 83.0k tiles"): `mappack
/// import --shard I/N` deals the regions to shards by the tiles they place, not every N-th by id, and
/// the shards still merge into the bytes of one unsharded import.
@Suite struct ImportShardTests {
    /// Every country of Natural Earth's Europe but Russia, whose polygon (reaching to the Pacific)
    /// heads about three quarters of Europe's tiles: no split into 3 shards by region can be even with
    /// it. Without it the largest region, Norway, heads about a quarter, and 50 regions are left to
    /// deal.
    static let countries =
        "AD,AL,AT,AX,BA,BE,BG,BY,CH,CZ,DE,DK,EE,ES,FI,FO,FR,GB,GG,GI,GR,HR,HU,IE,IM,IS,IT,JE,LI,LT,LU,LV,MC,MD,ME,MK,MT,NL,NO,PL,PT,RO,RS,SE,SI,SK,SM,UA,VA,XK"

    /// Three shards each place at least half the mean of the three. Dealt by tile count the split of
    /// this Europe is even to within a few percent (the regions after Norway each head under a tenth
    /// of the tiles); half the mean leaves room for the estimate, which places one zoom only, and is
    /// far above what region granularity forces. Dealt every third region by id (before issue 45), the
    /// shards placed 979 / 174 / 613 tiles: the lightest 0.3 of the mean.
    @Test func threeShardsOfEuropeEachPlaceAFairShareAndMergeToTheUnshardedBytes() throws {
        let folder = TemporaryFolder("import-shard-balance")
        let made = try Tool.run(
            RealWorldFixture.python,
            [ImportTests.helper, "inputs", "--out", folder.join("inputs"), "--countries", Self.countries, "--max-zoom", "8"], timeout: 600)
        try #require(made.status == 0, "make_import_inputs.py (run `make venv` first): \(made.stderr)")
        let inputs = folder.join("inputs")
        let arguments = [
            "import", "--tiles", inputs + "/tiles.mbtiles", "--regions", inputs + "/regions.geojson", "--places", inputs + "/places.geojson",
            "--catalog", "europe", "--map-version", "2026.12.0",
        ]
        let whole = try Tool.mappack(arguments + ["--out", folder.join("whole")], timeout: 600)
        try #require(whole.status == 0, "\(whole.stderr)")
        var placed: [Int] = []
        for index in 1...3 {
            let shard = try Tool.mappack(arguments + ["--shard", "\(index)/3", "--out", folder.join("shard-\(index)")], timeout: 600)
            try #require(shard.status == 0, "\(shard.stderr)")
            let record = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder.join("shard-\(index)/shard.json"))))
                    as? [String: Any])
            let counts = try #require(record["counts"] as? [String: Any], "\(record.keys.sorted())")
            placed.append(try #require(counts["placed"] as? Int, "\(counts)"))
        }
        let total = placed.reduce(0, +)
        #expect(total > 1500, "\(placed)")
        let mean = Double(total) / 3
        for (index, tiles) in placed.enumerated() {
            #expect(Double(tiles) >= 0.5 * mean, "shard \(index + 1)/3 placed \(tiles) of \(placed) tiles, under half the mean \(mean)")
        }

        let merge = try Tool.mappack(
            ["import", "--merge", folder.join("shard-2"), folder.join("shard-3"), folder.join("shard-1"), "--out", folder.join("merged")])
        try #require(merge.status == 0, "\(merge.stderr)")
        let expected = try ImportTests.files(folder.join("whole"))
        let merged = try ImportTests.files(folder.join("merged"))
        #expect(expected.keys.sorted() == merged.keys.sorted())
        #expect(expected.count >= 100, "\(expected.count) files")
        for (path, bytes) in expected { #expect(merged[path] == bytes, "\(path) differs") }
    }
}
