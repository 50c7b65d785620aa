import Foundation
import TestSupport
import Testing

/// Output into a pipe nobody reads (`mappack regions … | head -1`) ends quietly: exit 0 or 141
/// (as if killed by SIGPIPE), never a trap with a backtrace.
@Suite struct ClosedPipeTests {
    /// Runs mappack with standard output a pipe whose read end is already closed.
    private static func runIntoClosedPipe(_ arguments: [String]) throws -> (status: Int32, reason: Process.TerminationReason, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tool.path("mappack"))
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
        let out = Pipe()
        let err = Pipe()
        try out.fileHandleForReading.close()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
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
