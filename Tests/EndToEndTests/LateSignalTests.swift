import Foundation
import TestSupport
import Testing

/// A signal that reaches a build before its outputs are renamed into place stops it: exit 1,
/// nothing published, no staging left. The build is held at a phase by `MAPPACK_TEST_PAUSE_AT`,
/// so the signal arrives in that phase every time.
@Suite struct LateSignalTests {
    @Test(arguments: ["manifest", "cache seed", "pack", "publish"])
    func signalInTheFinalPhasesPublishesNothing(_ phase: String) throws {
        let world = try ServedWorld()
        let recipe = world.folder.join("late.yaml")
        try Data(
            "name: net\ncatalog: \(world.published)/catalog.json\nregions:\n  include: [europe/ch]\ncacheSeed:\n  include: [europe/ch]\noutput:\n  formats: [directory, tar.zst]\n"
                .utf8
        )
        .write(to: URL(fileURLWithPath: recipe))
        // A build that never reaches the phase, or never ends, is killed at its deadline: the reads
        // below then end and `wait` fails the test.
        let process = ChildProcess(
            "mappack", ["build", recipe, "--cache", world.folder.join("cache"), "--out", world.folder.join("out"), "--json"],
            environment: ["SOURCE_DATE_EPOCH": "1790000000", "MAPPACK_TEST_PAUSE_AT": phase])
        let out = Pipe()
        let err = Pipe()
        process.process.standardOutput = out
        process.process.standardError = err
        try process.start()
        // Read events until the build announces the phase it is now held in.
        var seen = Data()
        let marker = Data("\"phase\":\"\(phase)\"".utf8)
        while seen.range(of: marker) == nil {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen.append(chunk)
        }
        #expect(seen.range(of: marker) != nil, "the build never reached \(phase): \(String(decoding: seen, as: UTF8.self))")
        process.signal(SIGTERM)
        let rest = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        try process.wait()
        #expect(process.terminationReason == .exit && process.terminationStatus == 128 + SIGTERM, "\(stderr)")
        #expect(stderr.contains("SIGTERM") && stderr.contains("nothing was published"), "\(stderr)")
        #expect(!String(decoding: rest, as: UTF8.self).contains("\"event\":\"done\""))
        // The staging went to this run's trash, deleted by a remover that outlives the build.
        let output = leftoversOnceTrashIsGone(in: world.folder.join("out"))
        #expect(output.isEmpty, "\(output)")
    }
}
