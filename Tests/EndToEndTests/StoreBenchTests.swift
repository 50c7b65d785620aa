import Foundation
import TestSupport
import Testing

/// `Benchmarks/store.sh` and `mappack-storebench` (issue 18's rows), run on a tiny world: the rows come
/// out well formed and their numbers are measurements (positive), never judged as timings here.
@Suite struct StoreBenchTests {
    @Test func storeBenchPrintsWellFormedPathAndOpenRows() throws {
        let folder = TemporaryFolder("store-bench")
        let run = try Tool.run(
            "/bin/bash",
            [
                Tool.repositoryRoot + "/Benchmarks/store.sh", "--bin", Tool.buildFolder, "--scale", "0.05", "--only", "europe/ch",
                "--runs", "3", "--out", folder.join("bench"),
            ])
        try #require(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("path(of:) during an update of "), "\(run.stdout)")
        #expect(run.stdout.contains("open of an installed store ("), "\(run.stdout)")

        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder.join("bench/store.json")))) as? [String: Any])
        let path = try #require(report["path"] as? [String: Any], "\(report)")
        #expect(path["row"] as? String == "path-during-update")
        for key in [
            "changedBundles", "updateBytes", "updateSeconds", "sampleFiles", "baselineCalls", "baselineMedianMs", "baselineP99Ms", "updateCalls",
            "updateMedianMs", "updateP99Ms", "updateMaxMs", "medianRatio", "p99Ratio", "storeFiles", "storeBytes",
        ] {
            let value = try #require((path[key] as? NSNumber)?.doubleValue, "path row: \(key) missing in \(path)")
            #expect(value > 0, "path row: \(key) = \(value)")
        }
        #expect((path["baselineCalls"] as? Int) == 2000)
        #expect((path["updateMedianMs"] as? Double ?? 0) <= (path["updateMaxMs"] as? Double ?? 0))
        #expect(path["pass"] is Bool)

        let open = try #require(report["open"] as? [String: Any], "\(report)")
        #expect(open["row"] as? String == "open-installed-store")
        #expect(open["runs"] as? Int == 3)
        for key in [
            "installSeconds", "openMedianMs", "openMinMs", "openMaxMs", "openWithImageMedianMs", "baselineMedianMs", "baselineMinMs", "ratio",
            "storeFiles", "storeBytes",
        ] {
            let value = try #require((open[key] as? NSNumber)?.doubleValue, "open row: \(key) missing in \(open)")
            #expect(value > 0, "open row: \(key) = \(value)")
        }
        #expect((open["openMinMs"] as? Double ?? 1) <= (open["openMedianMs"] as? Double ?? 0))
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/strace") {
            for key in ["syscallsPerOpen", "filesOpenedPerOpen"] {
                let value = try #require((open[key] as? NSNumber)?.doubleValue, "open row: \(key) missing in \(open)")
                #expect(value > 0, "open row: \(key) = \(value)")
            }
        }
    }

    @Test func storeBenchRefusesAnUnknownOptionWithExitCode2() throws {
        let run = try Tool.run("mappack-storebench", ["open", "--image", "/x", "--storage", "/y", "--cache", "/z", "--size", "1"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("open: unknown option '--size'") && run.stderr.contains("usage: mappack-storebench"), "\(run.stderr)")
    }
}
