import Foundation
import MapIO
import Synchronization

/// One writing process at a time per map storage: an exclusive `flock` on the lock file in the storage
/// folder (`StoreLayout.lockFileName`), held around every write (install, download, update, delete,
/// repair, move, cache import) and never by readers. An app and its extension, or an app and the CLI,
/// take turns: the second writer waits. The lock is held per `Holder` (one per `MapStore` instance):
/// within a holder it is counted (the first lease takes the `flock`, the last one to let go releases
/// it), so an instance's own concurrent work (two downloads) never waits for itself, while two
/// instances on one storage in one process take turns exactly like two processes (issue 40): each
/// holder's `flock` is on a descriptor of its own, and `flock` locks of two open file descriptions
/// exclude each other also within a process. The lock goes with the process, also when it is killed.
enum StorageLock {
    /// Who holds a storage's lock: one per `MapStore` instance.
    struct Holder: Hashable, Sendable {
        private let number: UInt64
        private static let next = Atomic<UInt64>(1)

        /// A holder no other has been.
        init() { number = Holder.next.add(1, ordering: .relaxed).oldValue }
    }

    fileprivate struct Key: Hashable {
        let path: String
        let holder: Holder
    }

    /// Lock files held in this process, per holder: how many leases hold each.
    private static let held = Mutex<[Key: (lock: FileLock, holders: Int)]>([:])

    /// Takes the lock of the storage folder `root` for `holder` without waiting; nil when another holder
    /// (an instance or a process) holds it. A storage folder that does not exist yet has nothing to
    /// guard: the lease then holds no lock.
    static func tryHold(root: String, for holder: Holder) throws(MapStoreError) -> StorageLease? {
        let path = root + "/" + StoreLayout.lockFileName
        guard FileSystem.isDirectory(root) else { return StorageLease(key: nil, fresh: true) }
        do { return try attempt(Key(path: path, holder: holder)) } catch { throw MapStoreError.wrapping(error, operation: "lock", path: path) }
    }

    /// Whether another holder (an instance or a process) holds the lock of `root` now (asked without waiting).
    static func heldElsewhere(root: String, by holder: Holder) -> Bool {
        guard let lease = try? tryHold(root: root, for: holder) else { return true }
        lease.release()
        return false
    }

    /// Takes the lock of `root` for `holder`, waiting while another holder has it: `waiting` is called once,
    /// when the wait begins. Blocks its thread (a `BlockingPool` one); throws `cancelled` once
    /// `cancellation` is raised.
    static func hold(root: String, for holder: Holder, cancellation: CancellationFlag?, waiting: () -> Void) throws(MapStoreError)
        -> StorageLease
    {
        let path = root + "/" + StoreLayout.lockFileName
        guard FileSystem.isDirectory(root) else { return StorageLease(key: nil, fresh: true) }
        let key = Key(path: path, holder: holder)
        let lease: StorageLease?
        do {
            lease = try FileLock.waitFor({ () throws(FileError) in try attempt(key) }, stop: { cancellation?.isCancelled ?? false }, waiting: waiting)
        } catch { throw MapStoreError.wrapping(error, operation: "lock", path: path) }
        guard let lease else { throw MapStoreError.cancelled }
        return lease
    }

    /// Joins the holder's hold of the lock file, or takes the `flock` without waiting; nil when another
    /// holder has it.
    private static func attempt(_ key: Key) throws(FileError) -> StorageLease? {
        try held.withLock { held throws(FileError) -> StorageLease? in
            if let entry = held[key] {
                held[key] = (entry.lock, entry.holders + 1)
                return StorageLease(key: key, fresh: false)
            }
            guard let lock = try FileLock.tryAcquire(key.path) else { return nil }
            held[key] = (lock, 1)
            return StorageLease(key: key, fresh: true)
        }
    }

    /// Lets go of one hold of `key`; the holder's last one releases the `flock`. A storage folder left with nothing
    /// but the lock file (an install cancelled, the data moved away) is left empty: the file is removed
    /// while still locked, and a process waiting on it then finds it gone and takes a new one
    /// (`FileLock.tryAcquire` checks the file it locked is the one at the path).
    fileprivate static func release(_ key: Key) {
        held.withLock { held in
            guard let entry = held[key] else { return }
            if entry.holders > 1 {
                held[key] = (entry.lock, entry.holders - 1)
                return
            }
            if (try? DirectoryWalker.entries(of: FileSystem.parent(key.path))) == [StoreLayout.lockFileName] { try? FileSystem.removeFile(key.path) }
            // Dropping the last reference closes the descriptor, which releases the `flock`.
            held[key] = nil
        }
    }
}

/// One hold of a storage's lock (see `StorageLock`), let go by `release()` or when the lease is gone.
final class StorageLease: Sendable {
    /// The lock file and its holder; nil when the storage folder did not exist (nothing to guard).
    private let key: StorageLock.Key?
    /// True when this lease took the lock (no other work of its holder held it): another instance or
    /// process may have written the storage since this holder last did.
    let fresh: Bool
    private let released = Atomic<Bool>(false)

    fileprivate init(key: StorageLock.Key?, fresh: Bool) {
        self.key = key
        self.fresh = fresh
    }

    deinit { release() }

    /// Lets go of the hold (once; later calls do nothing).
    func release() {
        guard let key, !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        StorageLock.release(key)
    }
}
