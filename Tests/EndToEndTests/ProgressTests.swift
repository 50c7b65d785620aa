import Foundation
import MapFormat
import TestSupport
import Testing

/// Progress off a terminal (CI logs; issue 19 item 6): a line per phase with its own counts, and a
/// progress line every few seconds while a phase lasts, so no phase is silent. Standard error is a
/// pipe here, as in CI. `MAPPACK_PROGRESS_INTERVAL` shortens the interval, and the build is held at
/// the start of `pack` (`MAPPACK_TEST_PAUSE_AT`) for two seconds, a phase that reports
/// nothing by itself.
@Suite struct ProgressTests {
    @Test func eachPhaseHasALineWithItsCountsAndLongPhasesKeepTalking() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let plan = try Tool.mappack(["plan", recipe, "--json", "--cache", world.cache])
        let planned = try #require(try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any], "\(plan.stderr)")
        let bundles = try #require(planned["bundles"] as? Int)
        let build = try Tool.mappack(
            ["build", recipe, "--cache", world.cache, "--out", world.out],
            environment: [
                "SOURCE_DATE_EPOCH": "1790000000", "MAPPACK_PROGRESS_INTERVAL": "0.3",
                "MAPPACK_TEST_PAUSE_AT": "pack", "MAPPACK_TEST_PAUSE_SECONDS": "2",
            ])
        #expect(build.status == 0, "\(build.stderr)")
        let lines = build.stderr.split(separator: "\n").map(String.init)
        func first(_ prefix: String) -> String? { lines.first { $0.hasPrefix(prefix) } }
        #expect(first("fetch: \(bundles) bundles") != nil, "\(build.stderr)")
        #expect(first("unpack: ")?.contains("/\(bundles) bundles") == true, "\(build.stderr)")
        // The phase ends with its count (issue 43: a warm cache's unpack showed 0/N and nothing after).
        #expect(first("unpacked \(bundles)/\(bundles) bundles, ") != nil, "\(build.stderr)")
        let warm = try Tool.mappack(["build", recipe, "--cache", world.cache, "--out", world.folder.join("warm")])
        let warmLines = warm.stderr.split(separator: "\n").map(String.init)
        #expect(warmLines.contains { $0.hasPrefix("unpack: ") && $0.hasSuffix("(every bundle in the download cache)") }, "\(warm.stderr)")
        #expect(warmLines.contains { $0.hasPrefix("unpacked \(bundles)/\(bundles) bundles, ") }, "\(warm.stderr)")
        // The manifest lists the files of the bundles in the image's store (not those only the cache seed uses).
        let storeBundles = try #require(planned["bundleList"] as? [[String: Any]]).filter { $0["forStore"] as? Bool == true }.count
        let files = try world.manifest(world.out + "/fixture-1.0").files.count
        #expect(first("manifest: ") == "manifest: \(files) files of \(storeBundles) bundles", "\(build.stderr)")
        #expect(first("cache seed: ") != nil, "\(build.stderr)")
        #expect(first("pack: ")?.contains("fixture-1.0.tar.zst") == true, "\(build.stderr)")
        #expect(first("publish: ") != nil, "\(build.stderr)")
        // Held 2 s in pack with a line every 0.3 s: more lines follow the phase's first, each with
        // the files and bytes packed so far (issue 32 item 9).
        let packLines = lines.filter { $0.hasPrefix("pack") }
        #expect(packLines.count >= 3, "\(build.stderr)")
        // While held, nothing is packed yet; a tick that lands after the pause ended may show it done.
        let held = packLines.dropFirst().filter { $0.hasPrefix("pack 0/\(files) files, 0 B/") }
        #expect(held.count >= 2, "\(packLines)")
        #expect(packLines.dropFirst(1 + held.count).allSatisfy { $0.hasPrefix("pack \(files)/\(files) files, ") }, "\(packLines)")
        // The phases come in the order the build runs them.
        let order = ["fetch: ", "unpack: ", "manifest: ", "cache seed: ", "pack: ", "publish: "].compactMap { prefix in
            lines.firstIndex { $0.hasPrefix(prefix) }
        }
        #expect(order == order.sorted() && order.count == 6, "\(build.stderr)")
        #expect(!lines.contains(""), "a blank line: \(build.stderr)")
    }

    /// On a terminal (a pseudo-terminal from `script`) the redrawn line shows each phase, and its
    /// seconds keep moving while a phase that reports nothing lasts, instead of freezing.
    @Test func onATerminalTheLineKeepsMovingThroughEveryPhase() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let command = [Tool.path("mappack"), "build", recipe, "--cache", world.cache, "--out", world.out].joined(separator: " ")
        let run = try Tool.run(
            "/usr/bin/script", ["-q", "-e", "-c", command, "/dev/null"],
            environment: ["MAPPACK_TEST_PAUSE_AT": "pack", "MAPPACK_TEST_PAUSE_SECONDS": "2", "NO_COLOR": "1"])
        #expect(run.status == 0, "\(run.stdout)")
        let screen = run.stdout
        for phase in ["fetch: ", "unpack: ", "manifest: ", "pack: ", "publish: "] { #expect(screen.contains(phase), "\(phase) missing: \(screen)") }
        #expect(screen.contains("fixture-1.0.tar.zst · 1 s"), "the pack line did not move: \(screen)")
        #expect(screen.contains("built fixture"), "\(screen)")
    }

    @Test func quietAndJSONPrintNoProgress() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let quiet = try Tool.mappack(
            ["build", recipe, "--cache", world.cache, "--out", world.out, "-q"], environment: ["MAPPACK_PROGRESS_INTERVAL": "0.01"])
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet.stderr)")
        let json = try Tool.mappack(
            ["build", recipe, "--cache", world.cache, "--out", world.folder.join("json"), "--json"],
            environment: ["MAPPACK_PROGRESS_INTERVAL": "0.01"])
        #expect(json.status == 0 && json.stderr.isEmpty, "\(json.stderr)")
    }

    /// The store verbs that take a while (download, update, move) say so off a terminal too.
    @Test func storeVerbsThatTakeAWhileSayWhatTheyDo() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        #expect(try world.build(recipe).status == 0)
        let device = ["--storage", world.folder.join("device/maps"), "--cache", world.folder.join("device/cache")]
        #expect(try Tool.mappack(["store", "install", "--image", world.out + "/fixture-1.0"] + device).status == 0)
        #expect(try Tool.mappack(["store", "delete", "europe/ch/zh"] + device).status == 0)
        let environment = ["MAPPACK_PROGRESS_INTERVAL": "0.01"]
        let download = try Tool.mappack(["store", "download", "europe/ch/zh", "--catalog", world.catalog] + device, environment: environment)
        #expect(download.status == 0, "\(download.stderr)")
        #expect(download.stderr.hasPrefix("download: europe/ch/zh"), "\(download.stderr)")
        let move = try Tool.mappack(["store", "move", "--to", world.folder.join("moved")] + device, environment: environment)
        #expect(move.status == 0, "\(move.stderr)")
        #expect(move.stderr.hasPrefix("move: "), "\(move.stderr)")
    }

    /// `store download` on a terminal: one line for all the regions asked for (not one region after
    /// another), and "installing" once the bytes are in, instead of sitting at 100 %.
    @Test func storeDownloadOnATerminalSaysAllRegionsAndInstalling() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        #expect(try world.build(recipe).status == 0)
        let device = ["--storage", world.folder.join("device/maps"), "--cache", world.folder.join("device/cache")]
        #expect(try Tool.mappack(["store", "install", "--image", world.out + "/fixture-1.0"] + device).status == 0)
        #expect(try Tool.mappack(["store", "delete", "europe/ch/zh", "europe/ch/be"] + device).status == 0)
        let command = ([Tool.path("mappack"), "store", "download", "europe/ch/zh", "europe/ch/be", "--catalog", world.catalog] + device)
            .joined(separator: " ")
        let run = try Tool.run("/usr/bin/script", ["-q", "-e", "-c", command, "/dev/null"], environment: ["NO_COLOR": "1"])
        #expect(run.status == 0, "\(run.stdout)")
        let screen = run.stdout
        #expect(screen.contains("download 2 regions"), "\(screen)")
        #expect(!screen.contains("download: europe/ch/be "), "one region's line: \(screen)")
        #expect(screen.contains("installing"), "\(screen)")
        #expect(screen.contains("downloaded europe/ch/zh europe/ch/be"), "\(screen)")
    }

    /// A signal with `--quiet`: the one line that says the build stops, no blank line before it.
    @Test func anInterruptedQuietBuildPrintsNoBlankLine() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tool.path("mappack"))
        process.arguments = ["build", recipe, "--cache", world.cache, "--out", world.out, "-q", "--json"]
        process.environment = ProcessInfo.processInfo.environment.merging(["MAPPACK_TEST_PAUSE_AT": "manifest"]) { $1 }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.launchAlone()
        var seen = Data()
        while seen.range(of: Data("\"phase\":\"manifest\"".utf8)) == nil {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen.append(chunk)
        }
        kill(process.processIdentifier, SIGINT)
        _ = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 128 + SIGINT, "\(stderr)")
        #expect(stderr.hasPrefix("interrupted: stopping"), "\(stderr)")
        #expect(!stderr.contains("\n\n"), "\(stderr)")
    }

    @Test func publishSaysWhatItDoes() throws {
        let folder = TemporaryFolder("publish-progress")
        try SourceFixture.write(to: folder.join("source"))
        let publish = try Tool.mappack(
            ["publish", folder.join("source"), "--out", folder.join("catalog")], environment: ["MAPPACK_PROGRESS_INTERVAL": "0.01"])
        #expect(publish.status == 0, "\(publish.stderr)")
        let lines = publish.stderr.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("pack: \(SourceFixture.bundles.count) bundles") }, "\(publish.stderr)")
        #expect(lines.contains { $0.hasPrefix("catalog: ") }, "\(publish.stderr)")
        let json = try Tool.mappack(["publish", folder.join("source"), "--out", folder.join("catalog2"), "--json"])
        #expect(json.stdout.contains("\"event\":\"phase\""), "\(json.stdout)")
    }
}
