import Foundation
import TestSupport
import Testing

/// Output into a pipe nobody reads (`mappack regions … | head -1`) ends quietly: exit 0 or 141
/// (as if killed by SIGPIPE), never a trap with a backtrace.
@Suite struct ClosedPipeTests {
    /// Runs mappack with standard output a pipe whose read end is already closed.
    private static func runIntoClosedPipe(_ arguments: [String]) throws -> (status: Int32, reason: Process.TerminationReason, stderr: String) {
        let process = ChildProcess("mappack", arguments, timeout: 300)
        let out = Pipe()
        let err = Pipe()
        try out.fileHandleForReading.close()
        process.process.standardOutput = out
        process.process.standardError = err
        try process.start()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        try process.wait()
        return (process.terminationStatus, process.terminationReason, stderr)
    }

    @Test func writingToAClosedPipeEndsQuietly() throws {
        let world = try ServedWorld()
        let catalog = world.published + "/catalog.json"
        let recipe = try world.recipe(catalog: catalog)
        #expect(try world.build(recipe, cache: "cache", out: "out").status == 0)
        let image = world.folder.join("out/net-2026.11.0")
        for arguments in [
            ["regions", catalog], ["regions", catalog, "--tree"], ["regions", catalog, "--json"],
            ["inspect", image, "--json"], ["inspect", image], ["plan", recipe, "--json"],
        ] {
            let result = try ClosedPipeTests.runIntoClosedPipe(arguments)
            #expect(result.reason == .exit && (result.status == 0 || result.status == 141), "\(arguments): \(result.status) \(result.stderr)")
            #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("crashed"), "\(arguments): \(result.stderr)")
        }
    }
}
