import Foundation

/// Runs the package's own executables (`mappack`, `demo-world`) and other programs as child processes.
public enum Tool {
    /// What a finished process left behind.
    public struct Result: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
        /// Whether the process outlived its timeout and was killed (`status` is then SIGKILL's).
        public let timedOut: Bool
    }

    /// How long a child may run unless a test says otherwise: longer than any build here takes
    /// on two busy cores, so only a hang reaches it.
    public static let defaultTimeout: TimeInterval = 1200

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

    /// Runs `executable` with `arguments` and waits, at most `timeout` seconds: then the child is
    /// killed (SIGKILL) and the result says `timedOut`, so a hang fails its test instead of the run.
    public static func run(
        _ executable: String, _ arguments: [String], in directory: String? = nil,
        environment: [String: String] = [:], timeout: TimeInterval = defaultTimeout
    ) throws -> Result {
        let child = ChildProcess(executable, arguments, environment: environment, in: directory, timeout: timeout)
        let out = Pipe()
        let err = Pipe()
        child.process.standardOutput = out
        child.process.standardError = err
        try child.start()
        // Read both pipes while the child runs so a full pipe never blocks it.
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data()
        nonisolated(unsafe) var errData = Data()
        DispatchQueue.global().async(group: group) { unsafe outData = out.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: group) { unsafe errData = err.fileHandleForReading.readDataToEndOfFile() }
        var timedOut = false
        do { try child.wait() } catch { timedOut = true }
        group.wait()
        return unsafe Result(
            status: child.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self),
            timedOut: timedOut)
    }

    /// Runs `mappack` with `arguments`.
    public static func mappack(
        _ arguments: [String], in directory: String? = nil, environment: [String: String] = [:], timeout: TimeInterval = defaultTimeout
    ) throws -> Result {
        try run(path("mappack"), arguments, in: directory, environment: environment, timeout: timeout)
    }
}
