import Foundation
import MapIO
import TestSupport
import Testing

@Suite struct StagingAreaTests {
    /// The PID of a process that has exited and been reaped.
    private func deadPID() throws -> Int32 {
        let process = ChildProcess("/bin/true", [], timeout: 60)
        try process.start()
        try process.wait()
        return process.pid
    }

    private func make(_ path: String, folder: Bool) throws {
        if folder {
            try FileManager.default.createDirectory(atPath: path + "/inside", withIntermediateDirectories: true)
        } else {
            try Data("x".utf8).write(to: URL(fileURLWithPath: path))
        }
    }

    @Test func sweepRemovesEveryKindLeftByAGoneProcessAndNothingElse() throws {
        let folder = TemporaryFolder("staging-sweep")
        let dead = try deadPID()
        let live = getppid()
        let mine = getpid()
        let stale = [
            ".img-1.0.staging-\(dead)", ".img-1.0.shard-2-of-3-\(dead)", ".img-1.0.merge-\(dead)", ".www.publish-\(dead)",
            ".img-1.0.tar.zst.old-\(dead)", ".catalog.json.tmp-\(dead)", ".staging-\(dead)", ".store.trash-\(dead)",
        ]
        let kept = [
            ".img-1.0.staging-\(live)", ".img-1.0.merge-\(mine)", "img-1.0.shard-2-of-3", ".img-1.0.build.json",
            ".notes.backup-\(dead)", "img.staging-\(dead)", ".img.shard-x-of-3-\(dead)", ".img.staging-0", ".img.staging-",
            // Shard numbers as mappack never spells them: not its entries.
            ".img.shard-+2-of-3-\(dead)", ".img.shard-02-of-3-\(dead)",
        ]
        for (index, name) in (stale + kept).enumerated() { try make(folder.join(name), folder: index % 2 == 0) }
        try StagingArea.sweepStale(in: folder.path)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        #expect(left == Set(kept))
    }

    /// In the background, the same entries go, in one rename each into this process's trash, and
    /// a detached child deletes them; a dead run's trash is taken over. Nothing else is touched,
    /// and once the removals are waited for, no trash is left.
    @Test func sweepInTheBackgroundMovesTheSameEntriesAsideAndDeletesThem() throws {
        let folder = TemporaryFolder("staging-sweep-background")
        let dead = try deadPID()
        let live = getppid()
        let stale = [".img-1.0.staging-\(dead)", ".img-1.0.tar.zst.old-\(dead)", ".trash-\(dead)"]
        let kept = [".img-1.0.staging-\(live)", "img-1.0", ".img-1.0.build.json", ".trash-\(live)"]
        for (index, name) in (stale + kept).enumerated() { try make(folder.join(name), folder: index % 2 == 0) }
        try StagingArea.sweepStale(in: folder.path, inBackground: true)
        var left = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        #expect(left.subtracting([".trash-\(getpid())"]) == Set(kept))
        Trash.waitForRemovals(in: folder.path)
        left = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        #expect(left == Set(kept))
    }

    /// A zombie (killed, not yet reaped by its parent) owns nothing: its staging is swept.
    @Test func aZombiesStagingIsSwept() throws {
        let folder = TemporaryFolder("staging-sweep-zombie")
        // A shell whose child is killed while the shell, now `sleep`, never reaps it.
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "sleep 60 & echo $!; exec sleep 60"]
        let pipe = Pipe()
        shell.standardOutput = pipe
        try shell.launchAlone()
        defer {
            kill(shell.processIdentifier, SIGKILL)
            shell.waitUntilExit()
        }
        var text = ""
        while !text.contains("\n") {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let child = try #require(Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)))
        kill(child, SIGKILL)
        for _ in 0..<400 where !((try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8)) ?? "").contains(") Z ") {
            usleep(25_000)
        }
        try make(folder.join(".img.staging-\(child)"), folder: true)
        try StagingArea.sweepStale(in: folder.path)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    /// Thrown away: out of its name at once, and a small tree is deleted before `throwAway` returns.
    @Test func throwAwayLeavesNothing() throws {
        let folder = TemporaryFolder("staging-throw-away")
        let area = try StagingArea(for: "img", kind: .staging, in: folder.path).makeFolder("image/store")
        try make(area.path + "/image/store/file", folder: false)
        area.throwAway()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func sweepForOneNameLeavesOtherNamesAlone() throws {
        let folder = TemporaryFolder("staging-sweep-for")
        let dead = try deadPID()
        for name in [".world.staging-\(dead)", ".world.old-\(dead)", ".other.staging-\(dead)", ".world.x.staging-\(dead)"] {
            try make(folder.join(name), folder: true)
        }
        try StagingArea.sweepStale(in: folder.path, for: "world")
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        #expect(left == [".other.staging-\(dead)", ".world.x.staging-\(dead)"])
    }

    @Test func commitReplacesAFolderWholeAndLeavesNothingAside() throws {
        let folder = TemporaryFolder("staging-commit")
        try make(folder.join("out"), folder: true)
        let area = try StagingArea(for: "out", kind: .publish, in: folder.path).makeFolder("new")
        #expect(area.name == ".out.publish-\(getpid())")
        try area.commit(as: "out")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["out"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.join("out")) == ["new"])

        // A part of the staging folder may be committed instead of the whole; a file replaces a file.
        let again = try StagingArea(for: "out", kind: .staging, in: folder.path).makeFolder("image")
        try Data("new".utf8).write(to: URL(fileURLWithPath: again.path + "/packed"))
        try Data("old".utf8).write(to: URL(fileURLWithPath: folder.join("packed")))
        try again.commit("packed", as: "packed")
        try again.commit("image", as: "out")
        again.discard()
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: folder.path)) == ["out", "packed"])
        #expect(try String(contentsOfFile: folder.join("packed"), encoding: .utf8) == "new")
    }

    @Test(arguments: ["..", ".", "a/b", "", "/etc"])
    func commitRefusesATargetThatIsNotOneNameInTheFolder(_ target: String) throws {
        let folder = TemporaryFolder("staging-refuse")
        let area = try StagingArea(for: "out", kind: .staging, in: folder.join("inner")).makeFolder()
        #expect(throws: FileError.self) { try area.commit(as: target) }
        #expect(FileManager.default.fileExists(atPath: area.path))
    }

    /// One rule for every name a rename inside a folder takes: the target of `commit` and `takeIn`
    /// (one name) and the entry inside the staging area (a relative path) alike. The rule is about
    /// bytes, as the kernel reads a path: a `/` that a combining mark joins into one `Character`
    /// (`"../\u{301}x"`) still separates names there.
    @Test(arguments: ["..", ".", "", "/etc", "a/../../x", "a//b", "nul\0name", "../\u{301}x", "/\u{301}etc"])
    func everyRenameRefusesANameThatLeavesTheFolder(_ name: String) throws {
        #expect(FolderEntry(name) == nil)
        #expect(FolderEntry(oneName: name) == nil)
        let folder = TemporaryFolder("staging-entry")
        try Data("live".utf8).write(to: URL(fileURLWithPath: folder.join("live")))
        let area = try StagingArea(for: "out", kind: .staging, in: folder.path).makeFolder("sub")
        #expect(throws: FileError.self) { try area.commit(name, as: "target") }
        #expect(throws: FileError.self) { try area.takeIn(name, as: "sub/taken") }
        #expect(throws: FileError.self) { try area.takeIn("live", as: name) }
        #expect(FileManager.default.fileExists(atPath: folder.join("live")))
        #expect(!FileManager.default.fileExists(atPath: folder.join("target")))
    }

    @Test func aRenameTakesRelativePathsInsideTheFolder() throws {
        #expect(FolderEntry("a/b.c/.d")?.path == "a/b.c/.d")
        #expect(FolderEntry(oneName: "a/b") == nil)
        #expect(FolderEntry("a/\u{301}b")?.path == "a/\u{301}b")
        #expect(FolderEntry(oneName: "a/\u{301}b") == nil)
        #expect(FolderEntry(oneName: ".out.staging")?.path == ".out.staging")
        let folder = TemporaryFolder("staging-take-in")
        try Data("live".utf8).write(to: URL(fileURLWithPath: folder.join("live")))
        let area = try StagingArea(for: "out", kind: .staging, in: folder.path).makeFolder("sub")
        try area.takeIn("live", as: "sub/taken")
        #expect(try String(contentsOfFile: area.path + "/sub/taken", encoding: .utf8) == "live")
        try area.commit("sub/taken", as: "back")
        #expect(try String(contentsOfFile: folder.join("back"), encoding: .utf8) == "live")
    }
}
