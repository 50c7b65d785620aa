import Foundation
import TestSupport
import Testing

/// Power loss, not just kill -9 (issue 20): `Tests/Support/powercut_fs.py` is a FUSE filesystem that
/// keeps only what was made durable when it "cuts power"; `powercut_matrix.py` runs the real
/// `mappack store` on it and checks every surviving state. `make powercut` runs the whole matrix;
/// here run the filesystem's self-tests, a sampled matrix and one regression test per bug it found.
/// Where FUSE cannot be mounted the scripts exit 77 and each test says so and passes.
@Suite(.serialized) struct PowerCutTests {
    /// Debian's interpreter: its `python3-pyfuse3` does not import under other Pythons on `PATH`.
    static let python = "/usr/bin/python3"
    static let support = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Support").path

    /// Runs a script of `Tests/Support`; nil (after printing why) when FUSE cannot be mounted here.
    static func script(_ name: String, _ arguments: [String]) async throws -> Tool.Result? {
        // On a thread of its own: the scripts take seconds, and a blocked cooperative thread would stall other suites.
        let result = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Tool.Result, any Error>) in
            Thread {
                continuation.resume(
                    with: Result {
                        try Tool.run(python, [support + "/" + name] + arguments, environment: ["PYTHONDONTWRITEBYTECODE": "1"])
                    })
            }.start()
        }
        if result.status == 77 {
            print("PowerCutTests skipped: \(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))")
            return nil
        }
        return result
    }

    /// The store scenarios (the build's has a test of its own below).
    static let sampled = "install-folder,install-archive,update,download,download-catalog,update-catalog,delete,move"

    /// The images and catalogs, built by the first matrix run and reused by the others.
    static let fixture = TemporaryFolder("powercut-fixture")

    static func matrix(_ arguments: [String]) async throws -> Tool.Result? {
        try await script("powercut_matrix.py", ["--bin", Tool.buildFolder, "--fixture", fixture.join("images")] + arguments)
    }

    @Test func filesystemKeepsOnlyWhatWasMadeDurable() async throws {
        guard let result = try await PowerCutTests.script("powercut_selftest.py", []) else { return }
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }

    /// Every scenario's clean run cut right after it returned, and one cut halfway through its
    /// durability events, within a minute.
    @Test func sampledCrashMatrixUnderPowerLoss() async throws {
        let started = Date()
        guard let result = try await PowerCutTests.matrix(["--sample", "--scenarios", PowerCutTests.sampled]) else { return }
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("failures: 0"), "\(result.stdout)")
        print("PowerCutTests sampled matrix: \(result.stdout.split(separator: "\n").last ?? "") in \(Int(Date().timeIntervalSince(started))) s")
    }

    /// Regressions: power cut right after the operation returned success. Each kept less than it
    /// claimed before its fix: the storage and cache folders (install) or the move's destination
    /// were created without an fsync of their parent, so the whole store could vanish; the delete's
    /// commit could roll back because SQLite's `synchronous=FULL` leaves the journal's unlink
    /// undurable (`EXTRA` syncs the folder).
    @Test(arguments: ["install-folder", "install-archive", "delete", "move"])
    func finishedOperationSurvivesPowerCut(_ scenario: String) async throws {
        guard let result = try await PowerCutTests.matrix(["--scenarios", scenario, "--only-after-success"]) else { return }
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }

    /// Regression: a build cut right after it renamed its outputs into place left an image folder
    /// whose `manifest.json` was empty (the outputs were written without fsync, and the rename was
    /// durable before the data). With `--sync` they are synced before the renames: outputs verify or are absent.
    @Test func cutBuildLeavesOnlyOutputsThatVerify() async throws {
        guard let result = try await PowerCutTests.matrix(["--scenarios", "build", "--last-syncs", "2", "--drop-all"]) else { return }
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }

    /// The default build does not sync its outputs (issue 43): a cut at any of its last durability events,
    /// every unsynced change dropped, and the next build (after the reboot, a new boot id) rebuilds instead of
    /// trusting what the cut left, and its outputs verify.
    @Test func cutUnsyncedBuildIsRebuiltAfterTheReboot() async throws {
        guard let result = try await PowerCutTests.matrix(["--scenarios", "build-fast", "--last-syncs", "2", "--drop-all"]) else { return }
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("failures: 0"), "\(result.stdout)")
    }
}
