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
        var waiting = false
        while true {
            if let lock = try FileLock.tryAcquire(root, folder: true) { return lock }
            if !waiting {
                terminal.note("waiting: another mappack build or merge is writing to \(root); this one goes on when it is done")
                waiting = true
            }
            try await Task.sleep(nanoseconds: 200_000_000)
        }
    }
}
