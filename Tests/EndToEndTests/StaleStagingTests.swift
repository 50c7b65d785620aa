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
