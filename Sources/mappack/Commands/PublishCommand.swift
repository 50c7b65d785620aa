import Foundation
import MapBuild

/// `mappack publish SOURCE --out DIR`.
enum PublishCommand {
    static func run(_ raw: [String], terminal: Terminal) async throws -> Int32 {
        let arguments = try Arguments(raw, flags: ["json"], options: ["out", "jobs"])
        let source = try arguments.expect(["source_dir"])[0]
        guard let out = arguments.option("out") else { throw UsageError(message: "publish needs --out DIR") }
        let jobs = try arguments.int("jobs", range: 1...256) ?? ProcessInfo.processInfo.activeProcessorCount
        let result = try await Publisher(source: source, output: out, jobs: jobs).run()
        if terminal.json {
            terminal.event(["event": "published", "catalog": result.catalogPath, "regions": result.regions, "bundles": result.bundles, "bytes": result.bytes])
        } else {
            terminal.line("published \(result.regions) regions, \(result.bundles) bundles (\(result.bytes) bytes) → \(result.catalogPath)")
        }
        return 0
    }
}
