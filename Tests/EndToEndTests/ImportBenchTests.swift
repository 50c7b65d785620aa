import Foundation
import TestSupport
import Testing

/// `Benchmarks/import.sh` (issue 30's rows), run on a tiny real world and a tiny synthetic tileset:
/// the rows come out well formed and their numbers are measurements (positive), never judged as
/// timings here.
@Suite struct ImportBenchTests {
    @Test func importBenchPrintsWellFormedRealAndSyntheticRows() throws {
        let folder = TemporaryFolder("import-bench")
        let run = try Tool.run(
            "/bin/bash",
            [
                Tool.repositoryRoot + "/Benchmarks/import.sh", "--bin", Tool.buildFolder, "--countries", "CH,LI", "--max-zoom", "6",
                "--big-gib", "0.005", "--runs", "1", "--out", folder.join("bench"),
            ], timeout: 600)
        try #require(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("tippecanoe over the same countries"), "\(run.stdout)")
        #expect(run.stdout.contains("one sqlite3 read of every tile"), "\(run.stdout)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder.join("bench/import.json")))) as? [String: Any])
        let rows = try #require(report["rows"] as? [[String: Any]])
        #expect(rows.map { $0["row"] as? String } == ["import-real", "import-synthetic"])
        #expect(run.stdout.contains("import --shard 4 / unsharded"), "\(run.stdout)")
        // The MBTiles split, and the PMTiles one read by range (issue 45): ratios measured, and each
        // shard's fetched bytes over the archive's.
        for name in ["shards", "rangedShards"] {
            let shards = try #require(report[name] as? [String: Any], "\(report.keys.sorted())")
            for key in ["cpuRatio", "slowestWallRatio", "unshardedCPUSeconds", "unshardedWallSeconds"] {
                let value = try #require((shards[key] as? NSNumber)?.doubleValue, "\(key) missing in \(shards)")
                #expect(value > 0, "\(key) = \(value)")
            }
            #expect((shards["shardPlacedTiles"] as? [Int])?.count == 4, "\(shards)")
        }
        let ranged = try #require(report["rangedShards"] as? [String: Any])
        let ratios = try #require(ranged["shardFetchedRatios"] as? [Double], "\(ranged)")
        // Measured, not judged: on this tiny archive the directories are most of it.
        #expect(ratios.count == 4 && ratios.allSatisfy { $0 > 0 }, "\(ratios)")
        #expect(run.stdout.contains("bytes each shard fetched"), "\(run.stdout)")
        for row in rows {
            for key in ["baselineMedianSeconds", "importMedianSeconds", "ratio", "importPeakRSSMiB", "baselinePeakRSSMiB", "inputBytes"] {
                let value = try #require((row[key] as? NSNumber)?.doubleValue, "\(key) missing in \(row)")
                #expect(value > 0, "\(key) = \(value)")
            }
        }
    }

    /// `Benchmarks/geojson.sh` on small inputs: a row for boundaries and one for places, their peak
    /// RSS and ratios measured (positive), never judged here.
    @Test func geojsonBenchPrintsPeakRSSRatios() throws {
        let folder = TemporaryFolder("geojson-bench")
        let run = try Tool.run(
            "/bin/bash",
            [
                Tool.repositoryRoot + "/Benchmarks/geojson.sh", "--bin", Tool.buildFolder, "--vertices", "2000", "--places", "200", "--out",
                folder.join("bench"),
            ], timeout: 600)
        try #require(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("4x/1x = "), "\(run.stdout)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder.join("bench/geojson.json")))) as? [String: Any])
        let rows = try #require(report["rows"] as? [[String: Any]])
        #expect(rows.map { $0["row"] as? String } == ["import-geojson-boundaries", "import-geojson-places"])
        for row in rows {
            for key in ["baselinePeakRSSMiB", "peakRSSMiB1x", "peakRSSMiB4x", "ratio4xOver1x", "inputBytes1x", "inputBytes4x"] {
                let value = try #require((row[key] as? NSNumber)?.doubleValue, "\(key) missing in \(row)")
                #expect(value > 0, "\(key) = \(value)")
            }
        }
    }
}
