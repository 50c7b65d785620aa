import Foundation

/// Runs the package's own executables (`mappack`, `demo-world`) and other programs as child processes.
public enum Tool {
    /// What a finished process left behind.
    public struct Result: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
        /// True when the child outlived its timeout and was killed (SIGKILL).
        public var timedOut = false
    }

    /// How long a child may run unless the caller says otherwise: far beyond any step of the suite on
    /// a loaded machine, so only a hung child reaches it (and the suite goes on instead of hanging).
    public static let defaultTimeout: TimeInterval = 900

    /// The build folder holding the test binary and the package's executables.
    public static var buildFolder: String {
        if let override = ProcessInfo.processInfo.environment["MAPPACK_BUILD_DIR"] { return override }
        // The test bundle lives in .build/<triple>/debug/; the executables sit beside it.
        var url = Bundle.main.bundleURL
        for _ in 0..<4 where !FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("mappack").path) {
            url.deleteLastPathComponent()
        }
        return url.path
    }

    /// The repository's root folder (found from this source file, so tests run from anywhere).
    public static let repositoryRoot: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// Path of one of the package's executables.
    public static func path(_ name: String) -> String { buildFolder + "/" + name }

    /// Runs `executable` with `arguments` and waits.
    public static func run(
        _ executable: String, _ arguments: [String], in directory: String? = nil,
        environment: [String: String] = [:], timeout: TimeInterval = defaultTimeout
    ) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable.hasPrefix("/") ? executable : path(executable))
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        var env = ProcessInfo.processInfo.environment
        env["SWIFT_BACKTRACE"] = "enable=no"
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes while the child runs so a full pipe never blocks it.
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data()
        nonisolated(unsafe) var errData = Data()
        DispatchQueue.global().async(group: group) { outData = out.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: group) { errData = err.fileHandleForReading.readDataToEndOfFile() }
        nonisolated(unsafe) var timedOut = false
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem {
            timedOut = true
            kill(pid, SIGKILL)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        process.waitUntilExit()
        watchdog.cancel()
        group.wait()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self),
            timedOut: timedOut)
    }

    /// Runs `mappack` with `arguments`.
    public static func mappack(
        _ arguments: [String], in directory: String? = nil, environment: [String: String] = [:], timeout: TimeInterval = defaultTimeout
    ) throws -> Result {
        try run(path("mappack"), arguments, in: directory, environment: environment, timeout: timeout)
    }
}
