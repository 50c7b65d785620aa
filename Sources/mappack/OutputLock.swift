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

    /// The folders `acquire` makes for `root`: it and each parent that does not exist yet, deepest
    /// first. Taken before `acquire`, for `removeIfMadeAndEmpty`.
    static func missingFolders(_ root: String) -> [String] {
        var folders: [String] = []
        var folder = FileSystem.absolute(root)
        while !folder.isEmpty, folder != "/", !FileSystem.exists(folder) {
            folders.append(folder)
            folder = FileSystem.parent(folder)
        }
        return folders
    }

    /// Removes the folders this run made (`missingFolders`, deepest first) while each is empty (the
    /// run failed before writing anything, e.g. on its recipe or catalog): a failed build leaves no
    /// empty `--out`, nor the parents it made for a nested one. A folder that holds anything stays,
    /// and so do those above it (`rmdir` removes only an empty folder).
    static func removeIfMadeAndEmpty(_ made: [String]) {
        for folder in made {
            guard FileSystem.removeEmptyFolder(folder) else { return }
        }
    }
}
