import Foundation
import MapIO
import Synchronization

/// One writing process at a time per map storage: an exclusive `flock` on the lock file in the storage
/// folder (`StoreLayout.lockFileName`), held around every write (install, download, update, delete,
/// repair, move, cache import) and never by readers. An app and its extension, or an app and the CLI,
/// take turns: the second writer waits. Within a process the lock is counted: the first holder takes
/// the `flock`, the last one to let go releases it, so a process's own concurrent work (two downloads)
/// never waits for itself. The lock goes with the process, also when it is killed.
enum StorageLock {
    /// Lock files held by this process: how many leases hold each.
    private static let held = Mutex<[String: (lock: FileLock, holders: Int)]>([:])

    /// Takes the lock of the storage folder `root` without waiting; nil when another process holds it.
    /// A storage folder that does not exist yet has nothing to guard: the lease then holds no lock.
    static func tryHold(root: String) throws(MapStoreError) -> StorageLease? {
        let path = root + "/" + StoreLayout.lockFileName
        guard FileSystem.isDirectory(root) else { return StorageLease(path: nil, fresh: true) }
        do { return try attempt(path) } catch { throw MapStoreError.wrapping(error, operation: "lock", path: path) }
    }

    /// Whether another process holds the lock of `root` now (asked without waiting).
    static func heldElsewhere(root: String) -> Bool {
        guard let lease = try? tryHold(root: root) else { return true }
        lease.release()
        return false
    }

    /// Takes the lock of `root`, waiting while another process holds it: `waiting` is called once, when the
    /// wait begins. Blocks its thread (a `BlockingPool` one); throws `cancelled` once `cancellation` is raised.
    static func hold(root: String, cancellation: CancellationFlag?, waiting: () -> Void) throws(MapStoreError) -> StorageLease {
        let path = root + "/" + StoreLayout.lockFileName
        guard FileSystem.isDirectory(root) else { return StorageLease(path: nil, fresh: true) }
        let lease: StorageLease?
        do {
            lease = try FileLock.waitFor(
                { () throws(FileError) in try attempt(path) }, stop: { cancellation?.isCancelled ?? false }, waiting: waiting)
        } catch { throw MapStoreError.wrapping(error, operation: "lock", path: path) }
        guard let lease else { throw MapStoreError.cancelled }
        return lease
    }

    /// Joins this process's hold of `path`, or takes the `flock` without waiting; nil when another process holds it.
    private static func attempt(_ path: String) throws(FileError) -> StorageLease? {
        try held.withLock { held throws(FileError) -> StorageLease? in
            if let entry = held[path] {
                held[path] = (entry.lock, entry.holders + 1)
                return StorageLease(path: path, fresh: false)
            }
            guard let lock = try FileLock.tryAcquire(path) else { return nil }
            held[path] = (lock, 1)
            return StorageLease(path: path, fresh: true)
        }
    }

    /// Lets go of one hold of `path`; the last one releases the `flock`. A storage folder left with nothing
    /// but the lock file (an install cancelled, the data moved away) is left empty: the file is removed
    /// while still locked, and a process waiting on it then finds it gone and takes a new one
    /// (`FileLock.tryAcquire` checks the file it locked is the one at the path).
    fileprivate static func release(_ path: String) {
        held.withLock { held in
            guard let entry = held[path] else { return }
            if entry.holders > 1 {
                held[path] = (entry.lock, entry.holders - 1)
                return
            }
            if (try? DirectoryWalker.entries(of: FileSystem.parent(path))) == [StoreLayout.lockFileName] { try? FileSystem.removeFile(path) }
            // Dropping the last reference closes the descriptor, which releases the `flock`.
            held[path] = nil
        }
    }
}

/// One hold of a storage's lock (see `StorageLock`), let go by `release()` or when the lease is gone.
final class StorageLease: Sendable {
    /// The lock file; nil when the storage folder did not exist (nothing to guard).
    private let path: String?
    /// True when this lease took the lock (no other work of this process held it): another process may
    /// have written the storage since this process last did.
    let fresh: Bool
    private let released = Atomic<Bool>(false)

    fileprivate init(path: String?, fresh: Bool) {
        self.path = path
        self.fresh = fresh
    }

    deinit { release() }

    /// Lets go of the hold (once; later calls do nothing).
    func release() {
        guard let path, !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        StorageLock.release(path)
    }
}
