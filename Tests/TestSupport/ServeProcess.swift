import Foundation

/// `mappack serve` running as a child process: started with `--port 0 --json`, its URL read from
/// the `serving` line (with a deadline), stopped with a signal by `stop` (and killed if it lingers).
public final class ServeProcess: @unchecked Sendable {
    public let process = Process()
    /// `http://127.0.0.1:PORT` (no trailing slash).
    public let base: String
    /// The `serving` line as printed.
    public let servingLine: String
    private let stdout = Pipe()
    private let stderrFile: String
    private let scratch = TemporaryFolder("serve-log")

    public struct StartError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Starts `mappack serve` with `arguments` (after `serve`) and `environment` added, under a limit
    /// of `fileLimit` open files when given (`ulimit -n`), and waits up to `timeout` seconds for its `serving` line.
    public init(_ arguments: [String], environment extra: [String: String] = [:], fileLimit: Int? = nil, timeout: TimeInterval = 120) throws {
        stderrFile = scratch.join("stderr")
        _ = FileManager.default.createFile(atPath: stderrFile, contents: nil)
        let command = ["serve"] + arguments + ["--port", "0", "--json"]
        if let fileLimit {
            // exec: the shell becomes mappack, so signals and the pid are its own.
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -n \(fileLimit) && exec \"$0\" \"$@\"", Tool.path("mappack")] + command
        } else {
            process.executableURL = URL(fileURLWithPath: Tool.path("mappack"))
            process.arguments = command
        }
        var environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        process.standardOutput = stdout
        process.standardError = FileHandle(forWritingAtPath: stderrFile)
        try process.launchAlone()
        // The first line, read on another thread so the deadline holds even if nothing comes.
        let reader = stdout.fileHandleForReading
        let got = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var line = Data()
        DispatchQueue.global().async {
            while let byte = try? reader.read(upToCount: 1), let first = byte.first, first != UInt8(ascii: "\n") { unsafe line.append(first) }
            got.signal()
        }
        let arrived = got.wait(timeout: .now() + timeout) == .success
        let received = unsafe line
        guard arrived, let object = try? JSONSerialization.jsonObject(with: received) as? [String: Any], let url = object["url"] as? String
        else {
            process.terminate()
            process.waitUntilExit()
            let errors = (try? String(contentsOfFile: stderrFile, encoding: .utf8)) ?? ""
            let partial = unsafe String(decoding: line, as: UTF8.self)
            throw StartError(
                description:
                    "mappack serve \(arguments.joined(separator: " ")) printed no serving line: \(partial) \(errors)")
        }
        servingLine = String(decoding: received, as: UTF8.self)
        base = String(url.dropLast(url.hasSuffix("/") ? 1 : 0))
    }

    /// What it wrote on standard error so far.
    public var standardError: String { (try? String(contentsOfFile: stderrFile, encoding: .utf8)) ?? "" }

    /// Sends `signal` and waits up to `timeout` seconds; returns the exit status (nil: it had to be killed).
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, timeout: TimeInterval = 10) -> Int32? {
        guard process.isRunning else { return process.terminationStatus }
        kill(process.processIdentifier, signal)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        return process.terminationStatus
    }

    deinit { stop() }
}
