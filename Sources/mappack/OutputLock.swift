import Foundation
import MapIO

/// One mappack at a time writes an output folder: `build`, `build --shard` and `merge` take an
/// exclusive `flock` on the folder itself (nothing is added to it) for their whole run, so a
/// second one waits, saying so, instead of publishing over the first one's outputs. The lock
/// goes with the process, also when it is killed.
enum OutputLock {
    /// Takes the lock on `root` (made if missing), waiting while another mappack holds it.
    static func acquire(_ root: String, terminal: Terminal) async throws -> FileLock {
        let root = FileSystem.absolute(root)
        try FileSystem.makeDirectories(root)
        let lock = try await FileLock.acquire(root, folder: true, pollEvery: .milliseconds(200)) {
            terminal.note("waiting: another mappack build or merge is writing to \(root); this one goes on when it is done")
        }
        guard let lock else { throw CancellationError() }
        return lock
    }

    /// Removes the output folder `root` when this run made it and it is still empty (the run failed
    /// before writing anything, e.g. on its recipe or catalog): a failed build leaves no empty `--out`.
    static func removeIfMadeAndEmpty(_ root: String, made: Bool) {
        guard made, (try? DirectoryWalker.entries(of: FileSystem.absolute(root)))?.isEmpty == true else { return }
        _ = FileSystem.removeEmptyFolder(FileSystem.absolute(root))
    }
}
