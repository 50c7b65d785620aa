import Foundation
import TestSupport
import Testing

/// Two builds into one output folder take turns (issue 19 item 5): the second waits, says so,
/// and its image is what the folder holds at the end; it never reports an image it did not
/// publish.
@Suite struct OutputLockTests {
    @Test func aSecondBuildIntoTheSameOutputWaitsForTheFirst() throws {
        let world = try ServedWorld()
        let catalog = world.published + "/catalog.json"
        // Two recipes of the same name: A takes one region, B another.
        let recipeA = world.folder.join("a.yaml")
        let recipeB = world.folder.join("b.yaml")
        try Data("name: same\ncatalog: \(catalog)\nregions:\n  include: [europe/ch/be]\n".utf8).write(to: URL(fileURLWithPath: recipeA))
        try Data("name: same\ncatalog: \(catalog)\nregions:\n  include: [europe/ch/zh]\n".utf8).write(to: URL(fileURLWithPath: recipeB))
        let out = world.folder.join("out")
        // A is held at its publish phase until B has shown it is waiting.
        // Both are killed at their deadlines if they hang, which also ends the reads below.
        let first = ChildProcess(
            "mappack", ["build", recipeA, "--cache", world.folder.join("cache-a"), "--out", out, "--json"],
            environment: ["MAPPACK_TEST_PAUSE_AT": "publish"])
        let firstOut = Pipe()
        first.process.standardOutput = firstOut
        first.process.standardError = FileHandle.nullDevice
        try first.start()
        var seen = Data()
        while seen.range(of: Data("\"phase\":\"publish\"".utf8)) == nil {
            let chunk = firstOut.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen.append(chunk)
        }
        let second = ChildProcess("mappack", ["build", recipeB, "--cache", world.folder.join("cache-b"), "--out", out])
        let secondErr = Pipe()
        let secondOut = Pipe()
        second.process.standardError = secondErr
        second.process.standardOutput = secondOut
        try second.start()
        var said = Data()
        while String(decoding: said, as: UTF8.self).range(of: "waiting") == nil {
            let chunk = secondErr.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            said.append(chunk)
        }
        #expect(String(decoding: said, as: UTF8.self).contains("waiting: another mappack"), "\(String(decoding: said, as: UTF8.self))")
        #expect(second.isRunning)
        // A stops (nothing published); B then builds and publishes its own image.
        first.signal(SIGTERM)
        _ = firstOut.fileHandleForReading.readDataToEndOfFile()
        try first.wait()
        let secondStderr = String(decoding: secondErr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stdout = String(decoding: secondOut.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        try second.wait()
        #expect(first.terminationStatus == 128 + SIGTERM)
        #expect(second.terminationStatus == 0, "\(stdout)\(secondStderr)")
        let manifest = try String(contentsOfFile: out + "/same-2026.11.0/manifest.json", encoding: .utf8)
        #expect(manifest.contains("europe/ch/zh") && !manifest.contains("\"europe/ch/be\""))
    }
}
