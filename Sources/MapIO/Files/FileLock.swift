import Foundation

/// An exclusive `flock`, held until this value is gone: two fetchers sharing one cache never write
/// the same partial file (`<partial>.lock`), two builds never write one output folder at once
/// (a lock on the folder itself), and two processes never write one map storage at once (its lock file).
package final class FileLock: Sendable {
    private let descriptor: FileDescriptor

    private init(descriptor: FileDescriptor) { self.descriptor = descriptor }

    deinit { try? descriptor.close() }

    /// Takes the lock at `path` (a lock file, made if missing; or with `folder`, the folder itself,
    /// so nothing is added to it) without blocking; nil when someone else holds it.
    package static func tryAcquire(_ path: String, folder: Bool = false) throws(FileError) -> FileLock? {
        let file: FileDescriptor
        do {
            file =
                unsafe folder
                ? try FileDescriptor.open(path, .readOnly, options: .directory) : try FileDescriptor.open(path, .readWrite, options: .create)
        } catch {
            // An output folder its maker removed while this process waited (see below): made again.
            guard folder, error.code == ENOENT else { throw FileError("open", path, code: error.code) }
            try FileSystem.makeDirectories(path)
            return try tryAcquire(path, folder: folder)
        }
        let locked: Bool
        do { locked = try file.tryLock() } catch {
            try? file.close()
            throw FileError("flock", path, code: error.code)
        }
        guard locked else {
            try? file.close()
            return nil
        }
        // A lock file (or folder) removed or replaced while this process waited for it locks nothing anyone
        // else opens by name: then take the one now at the path (a folder made again if it is gone: a
        // build that made an output folder removes it when it fails before writing anything).
        if isFile(file, at: path) { return FileLock(descriptor: file) }
        try? file.close()
        if folder, !FileSystem.exists(path) { try FileSystem.makeDirectories(path) }
        return try tryAcquire(path, folder: folder)
    }

    /// Whether `file` is still the file named `path` (same device and inode).
    private static func isFile(_ file: FileDescriptor, at path: String) -> Bool {
        guard let now = try? FileSystem.status(path), let held = try? file.status() else { return false }
        return now.device == held.device && now.inode == held.inode
    }

    /// Takes the lock at `path` (see `tryAcquire`), trying again every `pollEvery` while someone else
    /// holds it, asleep in the task between tries: `flock(LOCK_NB)` never blocks, so the wait ends as
    /// soon as the task is cancelled, which gives nil. `waiting` is called once, before the first wait.
    /// For tasks; a thread of its own waits with `waitFor`.
    package static func acquire(
        _ path: String, folder: Bool = false, pollEvery interval: Duration, waiting: () -> Void = {}
    ) async throws(FileError) -> FileLock? {
        var said = false
        while true {
            if let lock = try tryAcquire(path, folder: folder) { return lock }
            if !said {
                waiting()
                said = true
            }
            do { try await Task.sleep(for: interval) } catch { return nil }
        }
    }

    /// Calls `attempt` (a non-blocking acquire) until it gives a value, every `interval`, and calls
    /// `waiting` once, before the first wait. Blocks the calling thread, so it is for threads of their
    /// own (`BlockingPool`), never the cooperative pool; `stop` is asked before each wait, and true
    /// there gives up (nil), so the wait stays cancellable, as `flock` without `LOCK_NB` would not be.
    package static func waitFor<Held>(
        _ attempt: () throws(FileError) -> Held?, interval: Duration = .milliseconds(20), stop: () -> Bool, waiting: () -> Void
    ) throws(FileError) -> Held? {
        var said = false
        while true {
            if let held = try attempt() { return held }
            if stop() { return nil }
            if !said {
                waiting()
                said = true
            }
            let (seconds, attoseconds) = interval.components
            var pause = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
            var left = timespec()
            // An interrupted sleep goes on for what was left of it.
            _ = try? FileDescriptor.retryOnInterrupt { () -> CInt in
                let result = unsafe nanosleep(&pause, &left)
                if result != 0 { pause = left }
                return result
            }
        }
    }
}
