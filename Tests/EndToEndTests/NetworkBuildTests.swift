import Foundation
import MapFormat
import TestSupport
import Testing

/// A small demo world published into a folder that test servers serve.
final class ServedWorld: @unchecked Sendable {
    let folder = TemporaryFolder("net")
    var published: String { folder.join("www") }

    init(slowFirstRequests rate: Int? = nil) throws {
        let gen = try Tool.run(Tool.path("demo-world"), ["--out", folder.join("src"), "--only", "europe/ch", "--scale", "0.3"])
        precondition(gen.status == 0, gen.stderr)
        let publish = try Tool.mappack(["publish", folder.join("src"), "--out", published])
        precondition(publish.status == 0, publish.stderr)
        if let rate {
            // Bundle URLs stay relative; the query makes the fault server trickle each bundle's first request.
            let path = published + "/catalog.json"
            var catalog = try JSONDecoder().decode(Catalog.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
            for key in catalog.bundles.keys { catalog.bundles[key]!.url += "?fault=trickle&rate=\(rate)&times=1" }
            try CanonicalJSON.encode(catalog).write(to: URL(fileURLWithPath: path))
        }
    }

    func recipe(catalog: String, name: String = "net") throws -> String {
        let path = folder.join("\(name).yaml")
        try Data("name: net\ncatalog: \(catalog)\nregions:\n  include: [europe/ch]\noutput:\n  formats: [directory, tar.zst]\n".utf8)
            .write(to: URL(fileURLWithPath: path))
        return path
    }

    func build(_ recipe: String, cache: String, out: String, extra: [String] = []) throws -> Tool.Result {
        try Tool.mappack(
            ["build", recipe, "--cache", folder.join(cache), "--out", folder.join(out)] + extra, environment: ["SOURCE_DATE_EPOCH": "1790000000"])
    }

    func same(_ a: String, _ b: String) throws -> Bool {
        let diff = try Tool.run("/usr/bin/diff", ["-r", folder.join(a + "/net-2026.11.0"), folder.join(b + "/net-2026.11.0")])
        let packedA = try Data(contentsOf: URL(fileURLWithPath: folder.join(a + "/net-2026.11.0.tar.zst")))
        let packedB = try Data(contentsOf: URL(fileURLWithPath: folder.join(b + "/net-2026.11.0.tar.zst")))
        return diff.status == 0 && packedA == packedB
    }

    /// Starts `mappack build` without waiting, and waits until a partial download exists.
    func startBuildUntilPartial(_ recipe: String, cache: String, out: String) throws -> ChildProcess {
        let process = ChildProcess(
            "mappack", ["build", recipe, "--cache", folder.join(cache), "--out", folder.join(out), "--json"],
            environment: ["SOURCE_DATE_EPOCH": "1790000000"])
        process.process.standardOutput = FileHandle.nullDevice
        process.process.standardError = FileHandle.nullDevice
        try process.start()
        let partial = folder.join(cache + "/partial")
        for _ in 0..<400 {
            let parts = (try? FileManager.default.contentsOfDirectory(atPath: partial))?.filter { $0.hasSuffix(".part") } ?? []
            let sizes = parts.compactMap { (try? FileManager.default.attributesOfItem(atPath: partial + "/" + $0))?[.size] as? Int }
            if sizes.contains(where: { $0 > 0 }) { break }
            usleep(25_000)
        }
        return process
    }
}

@Suite struct NetworkBuildTests {
    @Test func buildOverHTTPEqualsBuildOverFileURL() throws {
        let world = try ServedWorld()
        let nginx = try NginxServer(root: world.published)
        let overHTTP = try world.build(
            try world.recipe(catalog: nginx.baseURL.appendingPathComponent("catalog.json").absoluteString, name: "http"), cache: "c1", out: "http")
        #expect(overHTTP.status == 0, "\(overHTTP.stderr)")
        let overFile = try world.build(try world.recipe(catalog: world.published + "/catalog.json", name: "file"), cache: "c2", out: "file")
        #expect(overFile.status == 0, "\(overFile.stderr)")
        #expect(try world.same("http", "file"))
        // A second build sharing the first one's cache downloads nothing.
        let again = try world.build(
            try world.recipe(catalog: nginx.baseURL.appendingPathComponent("catalog.json").absoluteString, name: "http"),
            cache: "c1", out: "again", extra: ["--json"])
        #expect(again.status == 0)
        #expect(!again.stdout.contains("bundle-verified"))
        #expect(try world.same("http", "again"))
    }

    @Test func killedBuildResumesAndGivesTheSameImage() throws {
        let world = try ServedWorld(slowFirstRequests: 20_000)
        let server = try FaultServer(root: world.published)
        let recipe = try world.recipe(catalog: server.url("catalog.json").absoluteString)
        let victim = try world.startBuildUntilPartial(recipe, cache: "cache", out: "out")
        victim.signal(SIGKILL)
        try victim.wait()
        #expect(victim.terminationReason == .uncaughtSignal)
        let outAfterKill = (try? FileManager.default.contentsOfDirectory(atPath: world.folder.join("out"))) ?? []
        #expect(outAfterKill.filter { !$0.hasPrefix(".") }.isEmpty, "\(outAfterKill)")

        let rerun = try world.build(recipe, cache: "cache", out: "out")
        #expect(rerun.status == 0, "\(rerun.stderr)")
        // Nothing was fetched twice beyond the resumed partials: the bytes sent stay near the bundles' total.
        let catalog = try JSONDecoder().decode(Catalog.self, from: Data(contentsOf: URL(fileURLWithPath: world.published + "/catalog.json")))
        let total = catalog.bundles.values.reduce(0) { $0 + Int($1.size) }
        let sent = try server.stats().filter { $0.key.hasPrefix("/bundles/") }.values.reduce(0) { $0 + $1.bytes }
        #expect(Double(sent) <= 1.1 * Double(total), "sent \(sent) of \(total)")
        let leftovers =
            (try? FileManager.default.contentsOfDirectory(atPath: world.folder.join("out")))?.filter {
                $0.contains(".staging-") || $0.contains(".old-")
            } ?? []
        #expect(leftovers.isEmpty, "\(leftovers)")

        let reference = try world.build(recipe, cache: "reference-cache", out: "reference")
        #expect(reference.status == 0)
        #expect(try world.same("out", "reference"))
    }

    @Test func unreachableCatalogIsFailedWorkNamingTheURL() throws {
        let world = try ServedWorld()
        // A port nothing listens on any more: the server that had it is stopped.
        let server = try NginxServer(root: world.published)
        let url = server.baseURL.appendingPathComponent("catalog.json").absoluteString
        server.stop()
        let result = try world.build(try world.recipe(catalog: url), cache: "cache", out: "out")
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains(url), "\(result.stderr)")
        #expect(leftoversOnceTrashIsGone(in: world.folder.join("out")).isEmpty)
    }

    @Test(arguments: [SIGINT, SIGTERM])
    func interruptStopsCleanlyKeepingPartials(_ number: Int32) throws {
        // Slow enough that a loaded machine still sees the build mid-download when the signal comes.
        let world = try ServedWorld(slowFirstRequests: 4_000)
        let server = try FaultServer(root: world.published)
        let recipe = try world.recipe(catalog: server.url("catalog.json").absoluteString)
        let build = try world.startBuildUntilPartial(recipe, cache: "cache", out: "out")
        build.signal(number)
        try build.wait()
        #expect(build.terminationReason == .exit && build.terminationStatus == 128 + number)
        // Nothing in Output (not even staging), partial downloads kept for the next run.
        #expect(leftoversOnceTrashIsGone(in: world.folder.join("out")).isEmpty)
        let partials =
            (try? FileManager.default.contentsOfDirectory(atPath: world.folder.join("cache/partial")))?.filter { $0.hasSuffix(".part") } ?? []
        #expect(!partials.isEmpty)
        #expect(try world.build(recipe, cache: "cache", out: "out").status == 0)
    }
}

/// The catalog, its timestamp and signature go through the same retry policy as bundles, and an error
/// names the request that failed (issue 43 item 2).
@Suite struct CatalogFetchRetryTests {
    @Test func aPassing503OnTheCatalogAndItsTimestampIsRetried() throws {
        let world = try ServedWorld()
        let server = try FaultServer(root: world.published)
        defer { server.stop() }
        // The first request of each path (the timestamp, then the catalog) answers 503 with Retry-After: 1.
        let recipe = try world.recipe(catalog: server.url("catalog.json").absoluteString + "?fault=status&code=503&retry-after=1&times=1")
        let build = try world.build(recipe, cache: "cache", out: "out")
        #expect(build.status == 0, "\(build.stderr)")
        #expect(try Tool.mappack(["verify", world.folder.join("out/net-2026.11.0")]).status == 0)
        // The wait is said, as a bundle's retry is: a Retry-After of minutes is not silence.
        let retried =
            "catalog: retry 2 of \(server.url("catalog.json").absoluteString)?fault=status&code=503&retry-after=1&times=1 in 1.0 s: HTTP status 503"
        #expect(build.stderr.contains(retried), "\(build.stderr)")
    }

    /// `plan` and `regions` fetch a catalog as a build does: a 503's retry is said.
    @Test func planAndRegionsSayACatalogRetry() throws {
        let world = try ServedWorld()
        let server = try FaultServer(root: world.published)
        defer { server.stop() }
        let url = server.url("catalog.json").absoluteString + "?fault=status&code=503&retry-after=1&times=1"
        let plan = try Tool.mappack(["plan", try world.recipe(catalog: url), "--cache", world.folder.join("cache")])
        #expect(plan.status == 0 && plan.stderr.contains("catalog: retry 2 of \(url) in 1.0 s: HTTP status 503"), "\(plan.stderr)")
        // The timestamp's and the catalog's first requests answered 503 already: another path.
        try FileManager.default.copyItem(atPath: world.published + "/catalog.json", toPath: world.published + "/again.json")
        let again = server.url("again.json").absoluteString + "?fault=status&code=503&retry-after=1&times=1"
        let regions = try Tool.mappack(["regions", again])
        #expect(regions.status == 0 && regions.stderr.contains("catalog: retry 2 of \(again) in 1.0 s: HTTP status 503"), "\(regions.stderr)")
    }

    /// A catalog that arrives slowly shows a progress line (issue 43: 12 s of silence on a slow link),
    /// naming the URL; a build with `--json` prints no such line, and neither does a build whose catalog
    /// is a local file.
    @Test func aDownloadingCatalogShowsAProgressLine() throws {
        let world = try ServedWorld()
        let server = try FaultServer(root: world.published)
        defer { server.stop() }
        let url = server.url("catalog.json").absoluteString + "?fault=trickle&rate=20000&times=1"
        let build = try world.build(try world.recipe(catalog: url), cache: "cache", out: "out")
        #expect(build.status == 0, "\(build.stderr)")
        #expect(build.stderr.contains("catalog: downloading \(server.url("catalog.json").absoluteString)"), "\(build.stderr)")
        let local = try world.build(try world.recipe(catalog: world.published + "/catalog.json"), cache: "cache-2", out: "out-2")
        #expect(local.status == 0 && !local.stderr.contains("catalog: downloading"), "\(local.stderr)")
        let json = try world.build(try world.recipe(catalog: url), cache: "cache-3", out: "out-3", extra: ["--json"])
        #expect(json.status == 0 && !json.stderr.contains("catalog: downloading"), "\(json.stderr)")
    }

    /// Ctrl-C while the catalog downloads (a slow link) stops the build as it stops later: a line says
    /// so, the exit code is 130, and the `--out` folder the run made is gone.
    @Test func anInterruptWhileTheCatalogDownloadsStopsCleanly() throws {
        let world = try ServedWorld()
        let server = try FaultServer(root: world.published)
        defer { server.stop() }
        let recipe = try world.recipe(catalog: server.url("catalog.json").absoluteString + "?fault=trickle&rate=2000")
        let stderr = world.folder.join("stderr")
        try #require(FileManager.default.createFile(atPath: stderr, contents: nil))
        let build = ChildProcess(
            "mappack", ["build", recipe, "--cache", world.folder.join("cache"), "--out", world.folder.join("new/out")], timeout: 120)
        build.process.standardOutput = FileHandle.nullDevice
        build.process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderr))
        try build.start()
        // Until the catalog's bytes are on their way.
        for _ in 0..<400 where ((try? server.stats())?["/catalog.json"]?.bytes ?? 0) == 0 { usleep(25_000) }
        build.signal(SIGINT)
        try build.wait()
        let said = try String(contentsOfFile: stderr, encoding: .utf8)
        #expect(build.terminationReason == .exit && build.terminationStatus == 130, "\(build.terminationReason) \(build.terminationStatus): \(said)")
        #expect(said.contains("interrupted"), "\(said)")
        #expect(!FileManager.default.fileExists(atPath: world.folder.join("new")), "\(said)")
    }

    @Test func aLastingFailureNamesTheRequestThatFailed() throws {
        let world = try ServedWorld()
        // A signed publish: a catalog.json.timestamp beside the catalog, the first thing a build asks for.
        let key = world.folder.join("release")
        #expect(try Tool.mappack(["keygen", "--out", key]).status == 0)
        let signed = world.folder.join("signed")
        let publish = try Tool.mappack(["publish", world.folder.join("src"), "--out", signed, "--sign", key + ".key"])
        try #require(publish.status == 0, "\(publish.stderr)")
        try #require(FileManager.default.fileExists(atPath: signed + "/catalog.json.timestamp"))
        let server = try FaultServer(root: signed)
        defer { server.stop() }
        // Every request answers 500: the first one a build makes is the timestamp's.
        let recipe = try world.recipe(catalog: server.url("catalog.json").absoluteString + "?fault=status&code=500&retry-after=0")
        let build = try world.build(recipe, cache: "cache", out: "out")
        #expect(build.status == 1, "\(build.stderr)")
        #expect(build.stderr.contains("catalog.json.timestamp"), "the error names the catalog, not the timestamp that failed: \(build.stderr)")
    }
}
