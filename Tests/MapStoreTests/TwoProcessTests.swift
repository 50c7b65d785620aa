import Foundation
import MapFormat
import MapStore
import Synchronization
import TestSupport
import Testing

/// Two processes on one storage (issue 31 item 7): an app and its extension, or an app and the CLI,
/// take turns writing. A `mappack store` process is held midway by `MAPSTORE_STOP_AT` (it stops itself
/// with SIGSTOP there) while the other writer shows it waits; then it is continued, and both succeed.
@Suite struct TwoProcessTests {
    /// Where the held download stops: after its fetch (its regions `downloading`), and after its switch
    /// is recorded (a pending row in the state database, as an interrupted operation would leave).
    static let stopPoints = ["download.afterFetch", "download.afterMark"]

    @Test(arguments: stopPoints)
    func twoStoreProcessesTakeTurns(stopAt: String) async throws {
        _ = try await offPool { StoreFixture.shared }
        let nginx = try NginxServer(root: DownloadTests.catalogFolder)
        defer { nginx.stop() }
        let catalog = URL(string: "catalog.json", relativeTo: nginx.baseURL)!.absoluteURL
        let device = Device()
        _ = try await device.open(catalog: catalog)

        let download = try StoreProcess(
            ["download", "world", "europe/li", "--catalog", catalog.absoluteString], device: device, environment: ["MAPSTORE_STOP_AT": stopAt])
        defer { download.kill() }
        #expect(try await download.stopped(within: 120), "\(download.stderr)")
        let delete = try StoreProcess(["delete", "europe/ch/zh"], device: device)
        defer { delete.kill() }
        // The delete says it waits (once) and keeps waiting while the download is held.
        #expect(try await delete.says("waiting for another process using", within: 120), "\(delete.stderr)")
        #expect(delete.isRunning)
        download.continue()
        let downloaded = try await download.finish(within: 300)
        let deleted = try await delete.finish(within: 300)
        #expect(downloaded.status == 0, "\(downloaded.stderr)")
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(deleted.stderr.components(separatedBy: "waiting for another process").count == 2, "\(deleted.stderr)")
        for text in [downloaded.stderr, deleted.stderr] {
            #expect(!text.contains("interruptedOperation") && !text.contains("repair()"), "\(text)")
        }

        let status = try await device.run(["status"])
        #expect(status.status == 0 && status.stdout.hasPrefix("ok: "), "\(status.stdout)\(status.stderr)")
        let regions = try await device.run(["regions", "--json"])
        #expect(regions.stdout.contains("\"world\"") && regions.stdout.contains("\"europe/li\""), "\(regions.stdout)")
        #expect(!regions.stdout.contains("\"europe/ch/zh\""), "\(regions.stdout)")
        let store = try await device.open(full: true)
        #expect(store.initialStatus == .ok)
        #expect(try await store.verify(full: true).isEmpty)
    }

    /// An app (this process's `MapStore`) deletes while the CLI's download is held with its switch pending:
    /// the app's write waits (the library's hook hears it), then goes on; the app sees what the CLI
    /// installed, announced as region state changes like its own.
    @Test func anAppAndTheCommandLineTakeTurns() async throws {
        _ = try await offPool { StoreFixture.shared }
        let nginx = try NginxServer(root: DownloadTests.catalogFolder)
        defer { nginx.stop() }
        let catalog = URL(string: "catalog.json", relativeTo: nginx.baseURL)!.absoluteURL
        let device = Device()
        let app = try await device.open(catalog: catalog)
        let replay = EventReplay(app)

        let download = try StoreProcess(
            ["download", "world", "--catalog", catalog.absoluteString], device: device, environment: ["MAPSTORE_STOP_AT": "download.afterMark"])
        defer { download.kill() }
        #expect(try await download.stopped(within: 120), "\(download.stderr)")

        let waited = Mutex(false)
        let storage = app.storage.path
        MapStore.waitingForOtherProcess.withLock { hooks in
            hooks[storage] = { folder in if folder == storage { waited.withLock { $0 = true } } }
        }
        defer { MapStore.waitingForOtherProcess.withLock { $0[storage] = nil } }
        let delete = Task { try await app.deleteRegions(["europe/ch/zh"]) }
        #expect(await eventually(60) { waited.withLock { $0 } })
        download.continue()
        let downloaded = try await download.finish(within: 300)
        #expect(downloaded.status == 0, "\(downloaded.stderr)")
        try await delete.value

        let ids = try app.regions().map(\.id)
        #expect(ids.contains("world") && !ids.contains("europe/ch/zh"), "\(ids)")
        #expect(await replay.mismatch() == nil)
        #expect(try await app.verify(full: true).isEmpty)
        let status = try await device.run(["status"])
        #expect(status.status == 0 && status.stdout.hasPrefix("ok: "), "\(status.stdout)\(status.stderr)")
    }
}

/// A `mappack store VERB` process running beside the test: its standard error goes to a file the test
/// reads while it runs; every wait on it has a deadline, after which it is killed.
final class StoreProcess: @unchecked Sendable {
    private let process: Process
    private let log: String
    private let output: String
    private let folder = TemporaryFolder("store-process")

    init(_ verb: [String], device: Device, environment: [String: String] = [:]) throws {
        log = folder.join("stderr.log")
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tool.path("mappack"))
        process.arguments = ["store"] + verb + ["--storage", device.storage, "--cache", device.cache]
        process.environment = ProcessInfo.processInfo.environment.merging(environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }) { $1 }
        output = folder.join("stdout.log")
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        try process.launchAlone()
        self.process = process
    }

    var stderr: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
    var stdout: String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }

    /// True once standard output matches the regular expression `pattern`, within `seconds`; false when
    /// the process ended without.
    func prints(_ pattern: String, within seconds: Double) async throws -> Bool {
        let found = { self.stdout.range(of: pattern, options: .regularExpression) != nil }
        return await eventually(seconds) { found() || !process.isRunning } && found()
    }
    var isRunning: Bool { process.isRunning }

    /// True once the process stopped itself (state `T` in `/proc/PID/stat`), within `seconds`.
    func stopped(within seconds: Double) async throws -> Bool {
        let stat = "/proc/\(process.processIdentifier)/stat"
        return await eventually(seconds) {
            guard let text = try? String(contentsOfFile: stat, encoding: .utf8), let close = text.lastIndex(of: ")") else { return false }
            return text[text.index(close, offsetBy: 2)] == "T"
        }
    }

    /// True once the process said `text` on standard error, within `seconds`; false when it ended without.
    func says(_ text: String, within seconds: Double) async throws -> Bool {
        await eventually(seconds) { stderr.contains(text) || !process.isRunning } && stderr.contains(text)
    }

    /// Sends `number` to the process (held while it is stopped, delivered when it goes on).
    func signal(_ number: Int32) { Foundation.kill(process.processIdentifier, number) }

    /// Lets a stopped process go on.
    func `continue`() { Foundation.kill(process.processIdentifier, SIGCONT) }

    /// Kills the process if it still runs.
    func kill() {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
    }

    /// Waits for the end, at most `seconds` (then kills it): its exit status and standard error.
    func finish(within seconds: Double) async throws -> (status: Int32, stderr: String) {
        let child = process
        let ended = await eventually(seconds) { !child.isRunning }
        if !ended {
            kill()
            Foundation.kill(child.processIdentifier, SIGCONT)
        }
        try await offPool { child.waitUntilExit() }
        return (ended ? child.terminationStatus : -1, stderr)
    }
}
