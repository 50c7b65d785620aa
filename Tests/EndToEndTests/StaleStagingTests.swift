import Foundation
import TestSupport
import Testing

/// A build, shard or merge killed with SIGKILL leaves its hidden staging folder in the output
/// folder; the next run of any of them removes it, even when that run finds its outputs up to date.
@Suite struct StaleStagingTests {
    @Test func killedBuildShardAndMergeLeftoversAreSweptByAnUpToDateRun() throws {
        let world = try ServedWorld()
        let recipe = try world.recipe(catalog: world.published + "/catalog.json")
        let out = world.folder.join("out")
        let first = try world.build(recipe, cache: "cache", out: "out")
        #expect(first.status == 0, "\(first.stderr)")
        let shard = try world.build(recipe, cache: "cache", out: "shards", extra: ["--shard", "1/1"])
        #expect(shard.status == 0, "\(shard.stderr)")

        // Each run is held in a phase after its staging folder exists, then killed outright. The
        // build goes last, so only the up-to-date run below can remove its staging folder.
        var leftovers: [String] = []
        leftovers.append(try killHeld(["build", recipe, "--shard", "1/2"], at: "publish", kind: ".shard-1-of-2-", world: world))
        leftovers.append(
            try killHeld(["merge", world.folder.join("shards/net-2026.11.0.shard-1-of-1")], at: "manifest", kind: ".merge-", world: world))
        leftovers.append(try killHeld(["build", recipe, "--force"], at: "manifest", kind: ".staging-", world: world))
        #expect(leftovers.allSatisfy { !$0.isEmpty }, "\(leftovers)")

        let next = try world.build(recipe, cache: "cache", out: "out")
        #expect(next.status == 0, "\(next.stderr)")
        #expect(next.stdout.contains("up to date"), "\(next.stdout)")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []
        #expect(leftovers.allSatisfy { !left.contains($0) }, "\(left)")
        #expect(try Tool.mappack(["verify", out + "/net-2026.11.0"]).status == 0)
    }

    /// A build killed with SIGKILL whose parent has not reaped it yet (a zombie, as right after `kill
    /// -9` in a script) is dead: the next successful run removes its staging folder (issue 32 item 2),
    /// and a no-op run after another killed build puts the leftover out of the way at once and does
    /// not wait for its deletion.
    @Test func aZombieBuildsStagingIsGoneAfterTheNextRunAndANoOpDoesNotPayForIt() throws {
        let world = try ServedWorld()
        let recipe = try world.recipe(catalog: world.published + "/catalog.json")
        let out = world.folder.join("out")
        let (leftover, parent) = try killUnreaped(recipe, world: world)
        defer { end(parent) }
        let next = try world.build(recipe, cache: "cache", out: "out")
        #expect(next.status == 0 && next.stdout.contains("built"), "\(next.stderr)")
        // Only the build stamp is hidden in a finished output folder: no staging, no trash.
        var left = (try? FileManager.default.contentsOfDirectory(atPath: out))?.filter { $0.hasPrefix(".") && !$0.hasSuffix(".build.json") } ?? []
        #expect(!leftover.isEmpty && left.isEmpty, "\(leftover): \(left)")

        let (second, secondParent) = try killUnreaped(recipe, extra: ["--force"], world: world)
        defer { end(secondParent) }
        let started = ContinuousClock.now
        let noOp = try world.build(recipe, cache: "cache", out: "out")
        print("stale staging: the no-op after a killed build took \(ContinuousClock.now - started)")
        #expect(noOp.status == 0 && noOp.stdout.contains("up to date"), "\(noOp.stderr)")
        left = (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []
        #expect(!second.isEmpty && !left.contains(second), "\(left)")
        #expect(left.allSatisfy { !$0.contains(".staging-") }, "\(left)")
        #expect(try Tool.mappack(["verify", out + "/net-2026.11.0"]).status == 0)
    }

    /// Starts a build held at `manifest` under a shell that then becomes `sleep`, which never reaps
    /// it; kills the build with SIGKILL once its staging folder exists and returns that folder's
    /// name, and the parent that keeps it a zombie (for `end`).
    private func killUnreaped(_ recipe: String, extra: [String] = [], world: ServedWorld) throws -> (String, Process) {
        let out = world.folder.join("out")
        let command =
            ([Tool.path("mappack"), "build", recipe, "--cache", world.folder.join("cache"), "--out", out] + extra).joined(separator: " ")
            + " >/dev/null 2>&1 & echo $!; exec sleep 120"
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", command]
        shell.environment = ProcessInfo.processInfo.environment.merging(["SOURCE_DATE_EPOCH": "1790000000", "MAPPACK_TEST_PAUSE_AT": "manifest"]) {
            $1
        }
        let pipe = Pipe()
        shell.standardOutput = pipe
        shell.standardError = FileHandle.nullDevice
        try shell.launchAlone()
        var text = ""
        while !text.contains("\n") {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let pid = try #require(Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), "\(text)")
        let name = ".net-2026.11.0.staging-\(pid)"
        for _ in 0..<2400 where !FileManager.default.fileExists(atPath: out + "/" + name + "/image/store") { usleep(25_000) }
        kill(pid, SIGKILL)
        // Dead, but a zombie until `sleep` (which never waits) goes.
        for _ in 0..<2400 {
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            if stat.contains(") Z ") { break }
            usleep(25_000)
        }
        #expect(((try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? "").contains(") Z "))
        return (FileManager.default.fileExists(atPath: out + "/" + name) ? name : "", shell)
    }

    /// Ends the parent `killUnreaped` started (which reaps nothing: its zombie goes with it).
    private func end(_ parent: Process) {
        kill(parent.processIdentifier, SIGKILL)
        parent.waitUntilExit()
    }

    /// Runs `mappack ARGUMENTS --out OUT` held at `phase`, waits until its staging folder (a hidden
    /// name with `kind` and its PID) exists, kills it with SIGKILL and returns that folder's name.
    private func killHeld(_ arguments: [String], at phase: String, kind: String, world: ServedWorld) throws -> String {
        let out = world.folder.join("out")
        let process = ChildProcess(
            "mappack", arguments + (arguments.first == "merge" ? [] : ["--cache", world.folder.join("cache")]) + ["--out", out],
            environment: ["SOURCE_DATE_EPOCH": "1790000000", "MAPPACK_TEST_PAUSE_AT": phase])
        process.process.standardOutput = FileHandle.nullDevice
        process.process.standardError = FileHandle.nullDevice
        try process.start()
        let name = ".net-2026.11.0\(kind)\(process.pid)"
        // Held for up to 30 s at the phase; the staging folder is there long before.
        let marker = out + "/" + name + (kind == ".staging-" || kind == ".merge-" ? "/image/store" : "/shard.json")
        for _ in 0..<800 {
            if FileManager.default.fileExists(atPath: marker) { break }
            usleep(25_000)
        }
        process.signal(SIGKILL)
        try process.wait()
        #expect(process.terminationReason == .uncaughtSignal)
        return FileManager.default.fileExists(atPath: out + "/" + name) ? name : ""
    }
}
