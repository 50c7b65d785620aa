import Foundation
import TestSupport
import Testing

/// Ctrl-C in any phase of a large build (`reuse` of a `--from` build too) ends it at once (issue 32 item 1): exit 1 within 2 s of the
/// signal (asserted with a margin for a loaded two-core box; each time is printed), no phase starts
/// after the signal, the progress line says "stopping" and stops moving, nothing is published, and
/// the next run leaves no staging behind.
///
/// The world has many bundles and files at a small scale (the shape of a Europe build, not its
/// bytes), so every phase has real work to stop. The signal is sent when the build's own events say
/// the phase has started: no pause hook holds the build, so the phase's work is what must stop.
@Suite(.serialized) struct InterruptTimingTests {
    /// Where each phase's signal is sent: after this text shows (a `phase` event, the first event
    /// of a kind, or, off `--json`, the phase's first progress line on standard error).
    /// `reuse` is a `--from` build's copy of an earlier image's files (`WARM` stands for that image).
    static let phases: [(name: String, marker: String, warmCache: Bool, json: Bool, extra: [String])] = [
        ("fetch", "\"event\":\"bundle-verified\"", false, true, []),
        ("unpack", "\"event\":\"bundle-unpacked\"", true, true, []),
        ("reuse", "\"phase\":\"reuse\"", true, true, ["--from", "WARM"]),
        ("manifest", "\"phase\":\"manifest\"", true, true, []),
        ("cache seed", "\"phase\":\"cache seed\"", true, true, []),
        // Off --json, as at a terminal or in CI: the progress line must stop moving too. At a line's start:
        // "unpack: " holds "pack: " too, and a signal there is in the unpack phase.
        ("pack", "\npack: ", true, false, []),
        ("mbtiles", "\"phase\":\"mbtiles\"", true, true, []),
        ("maplibre-offline", "\"phase\":\"maplibre-offline\"", true, true, []),
        ("publish", "\"phase\":\"publish\"", true, true, []),
    ]

    @Test func sigintInEveryPhaseOfALargeBuildExitsWithinTwoSeconds() throws {
        let folder = TemporaryFolder("interrupt-timing")
        // The demo world's Europe: 6,168 bundles, as in the issue, of a few KiB each.
        let catalog = try DemoWorldFixture.publish(in: folder, only: "europe", scale: 0.02)
        let recipe = folder.join("europe.yaml")
        try Data(
            """
            name: europe
            catalog: \(catalog)
            regions:
              include: [europe]
            cacheSeed:
              include: [world]
            output:
              formats: [directory, tar.zst, mbtiles, maplibre-offline]

            """.utf8
        ).write(to: URL(fileURLWithPath: recipe))
        let out = folder.join("Output")
        // A warm download cache for the phases after fetch (filled by a build into another folder).
        let warm = try Tool.mappack(
            ["build", recipe, "--cache", folder.join("cache"), "--out", folder.join("warm"), "--json"],
            environment: ["SOURCE_DATE_EPOCH": "1790000000"])
        try #require(warm.status == 0, "\(warm.stderr)")
        print("interrupt timing: the whole build \(Self.phaseSeconds(warm.stdout))")

        var times: [String] = []
        for (index, phase) in Self.phases.enumerated() {
            let cache = phase.warmCache ? folder.join("cache") : folder.join("cold-\(index)")
            let extra = phase.extra.map { $0 == "WARM" ? folder.join("warm/europe-2026.11.0") : $0 }
            let run = try Self.interrupt(recipe: recipe, cache: cache, out: out, after: phase.marker, json: phase.json, extra: extra)
            times.append("\(phase.name) \(String(format: "%.2f", run.seconds)) s")
            #expect(run.reached, "\(phase.name): the build never reached it: \(run.stdout.suffix(2000))")
            // The publish phase syncs what is staged, then passes the point of no return
            // (`PublishGate`); with writeback started per file that sync is short, so a signal sent on
            // the phase's event may come after it. Then the build completes and says so, at once.
            // (LateSignalTests holds a build in this phase to check the stop itself every time.) On a
            // loaded machine the signal can even come once the renames are done and the build is ending:
            // then it has nothing to stop, and the outputs it published must verify all the same.
            if phase.name == "publish" && (run.stderr.contains("too late to stop") || run.status == 0) {
                #expect(run.status == 0, "\(phase.name): exit \(run.status): \(run.stderr.suffix(2000))")
                #expect(run.seconds < 10, "\(phase.name): \(run.seconds) s from SIGINT to exit")
                let verified = try Tool.mappack(["verify", out + "/europe-2026.11.0"])
                #expect(verified.status == 0, "\(phase.name): \(verified.stdout)\(verified.stderr)")
                continue
            }
            #expect(run.status == 128 + SIGINT, "\(phase.name): exit \(run.status): \(run.stderr.suffix(2000))")
            #expect(run.seconds < 10, "\(phase.name): \(run.seconds) s from SIGINT to exit")
            #expect(run.stderr.contains("nothing was published"), "\(phase.name): \(run.stderr.suffix(2000))")
            // The build stops where it is: no later phase starts (no phase event, no phase's first line),
            // and after the line that says it is stopping, only the error follows: nothing moves.
            let later = run.after.components(separatedBy: "\n").filter { $0.contains("\"event\":\"phase\"") }
            #expect(later.isEmpty, "\(phase.name): phases after the signal: \(later)")
            let stopping = run.stderr.components(separatedBy: "\n").drop { !$0.hasPrefix("interrupted: stopping") }
            #expect(!stopping.isEmpty, "\(phase.name): \(run.stderr.suffix(2000))")
            // Partial downloads are mentioned only while there can be some (issue 43): once every bundle is
            // in place the line says the downloads are complete.
            let afterDownloads = !["fetch", "unpack", "reuse"].contains(phase.name)
            if let line = stopping.first, phase.name != "publish" {
                #expect(line.contains("partial downloads") == !afterDownloads, "\(phase.name): \(line)")
                #expect(line.contains("downloads are complete") == afterDownloads, "\(phase.name): \(line)")
            }
            let moving = stopping.dropFirst().filter { !$0.isEmpty && !$0.hasPrefix("error: ") }
            #expect(moving.isEmpty, "\(phase.name): progress after the signal: \(moving)")
            let published = (try? FileManager.default.contentsOfDirectory(atPath: out))?.filter { !$0.hasPrefix(".") } ?? []
            #expect(published.isEmpty, "\(phase.name): \(published)")
            // What the staging held is out of the way at once: no staging folder under its own name.
            let staging = (try? FileManager.default.contentsOfDirectory(atPath: out))?.filter { $0.contains(".staging-") } ?? []
            #expect(staging.isEmpty, "\(phase.name): \(staging)")
        }
        print("interrupt timing: SIGINT to exit: \(times.joined(separator: ", "))")

        let next = try Tool.mappack(
            ["build", recipe, "--cache", folder.join("cache"), "--out", out], environment: ["SOURCE_DATE_EPOCH": "1790000000"])
        #expect(next.status == 0, "\(next.stderr)")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: out))?.filter { $0.hasPrefix(".") && !$0.hasSuffix(".build.json") } ?? []
        #expect(left.isEmpty, "left after the next run: \(left)")
        // Tens of thousands of entries: `rm` removes them in seconds, FileManager (the folder's
        // own clean-up, which then finds nothing) in minutes on a busy box.
        _ = try Tool.run("/bin/rm", ["-rf", "--", folder.path], timeout: 600)
    }

    /// One interrupted build: what it printed before and after the signal, and the time from the
    /// signal to its exit.
    struct Interrupted {
        var reached = false
        var status: Int32 = 0
        var seconds: Double = 0
        var stdout = ""
        var after = ""
        var stderr = ""
    }

    /// Runs a build into `out`, sends SIGINT as soon as `marker` shows on standard output (with
    /// `--json`) or standard error (without), and waits for its exit (killed after 60 s).
    static func interrupt(
        recipe: String, cache: String, out: String, after marker: String, json: Bool = true, extra: [String] = []
    ) throws -> Interrupted {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tool.path("mappack"))
        process.arguments = ["build", recipe, "--cache", cache, "--out", out, "--force"] + extra + (json ? ["--json"] : [])
        process.environment = ProcessInfo.processInfo.environment.merging([
            "SOURCE_DATE_EPOCH": "1790000000", "MAPPACK_PROGRESS_INTERVAL": "0.05", "SWIFT_BACKTRACE": "enable=no",
        ]) { $1 }
        let outPipe = Pipe()
        let errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.launchAlone()
        let watched = json ? outPipe.fileHandleForReading : errPipe.fileHandleForReading
        let other = json ? errPipe.fileHandleForReading : outPipe.fileHandleForReading
        nonisolated(unsafe) var otherData = Data()
        let reader = DispatchGroup()
        DispatchQueue.global().async(group: reader) { unsafe otherData = other.readDataToEndOfFile() }
        var result = Interrupted()
        var seen = Data()
        while seen.range(of: Data(marker.utf8)) == nil {
            let chunk = watched.availableData
            if chunk.isEmpty { break }
            seen.append(chunk)
        }
        result.reached = seen.range(of: Data(marker.utf8)) != nil
        let signalled = ContinuousClock.now
        kill(process.processIdentifier, SIGINT)
        nonisolated(unsafe) var rest = Data()
        DispatchQueue.global().async(group: reader) { unsafe rest = watched.readDataToEndOfFile() }
        if exited.wait(timeout: .now() + 60) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            exited.wait()
        }
        let elapsed = ContinuousClock.now - signalled
        process.waitUntilExit()
        reader.wait()
        result.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        result.status = process.terminationStatus
        let before = String(decoding: seen, as: UTF8.self)
        let after = unsafe String(decoding: rest, as: UTF8.self)
        let otherText = unsafe String(decoding: otherData, as: UTF8.self)
        // Whatever followed the marker in the chunk it came in was printed before the signal.
        result.after = after
        result.stdout = json ? before + after : otherText
        result.stderr = json ? otherText : before + after
        return result
    }

    /// Seconds in each phase of a `--json` build, from its phase events' order (for the log).
    static func phaseSeconds(_ events: String) -> String {
        let phases = events.components(separatedBy: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "\"phase\":\"") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != "\"" })
        }
        let done = events.components(separatedBy: "\n").first { $0.contains("\"event\":\"done\"") } ?? ""
        let seconds = done.range(of: "\"seconds\":").map { String(done[$0.upperBound...].prefix { $0 != "," && $0 != "}" }) } ?? "?"
        return "took \(seconds) s through \(phases.joined(separator: ", "))"
    }
}
