/// How `mappack` ends, as its parent process sees it: every command returns one, and
/// `Mappack.exitCode(for:)` maps errors to one, so no number is written twice.
import Foundation

struct ExitCode: Equatable, Sendable {
    let rawValue: Int32

    /// The work was done, or the answer printed.
    static let success = ExitCode(rawValue: 0)
    /// The work failed: a download, a check that found problems, a full disk, a store that is not ok.
    static let failure = ExitCode(rawValue: 1)
    /// Bad usage or bad input: an unknown option, a recipe or catalog with a mistake, a path that is no image.
    static let usage = ExitCode(rawValue: 2)
    /// Standard output was closed by its reader (`| head`), as a shell reports a death by SIGPIPE.
    static let closedOutput = ExitCode(rawValue: 128 + SIGPIPE)

    /// The run was stopped by `signal` (SIGINT, SIGTERM) after it cleaned up, as a shell reports it.
    static func interrupted(by signal: Int32) -> ExitCode { ExitCode(rawValue: 128 + signal) }

    /// `.success` when `ok`, else `.failure`.
    init(ok: Bool) { self = ok ? .success : .failure }
    private init(rawValue: Int32) { self.rawValue = rawValue }
}
