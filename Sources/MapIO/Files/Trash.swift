import CLinux
import Foundation
import Synchronization

/// Where a folder that is no longer wanted (an interrupted run's staging, a dead run's leftovers)
/// goes to be deleted without anyone waiting for it: one rename moves it into `.trash-<pid>` in the
/// same folder, out of every real name at once, and its files are deleted later, by a child
/// process that outlives this one.
///
/// Only entries put there by `put` are ever in a trash folder, so deleting one can remove nothing
/// else (a power cut at any moment leaves the trash or less of it; the next run's
/// `StagingArea.sweepStale` takes over a dead process's trash like any other staging entry).
package enum Trash {
    /// Children deleting trash folders, to wait for at the end of a run that succeeded.
    private static let removers = Mutex<[pid_t]>([])

    /// This process's trash folder in `folder`.
    package static func area(in folder: String) -> StagingArea { StagingArea(for: "", kind: .trash, in: folder) }

    /// Moves the entry `name` of `folder` into this process's trash there (made when missing), in
    /// one rename relative to `folder`'s descriptor.
    package static func put(_ name: String, in folder: String) throws(FileError) {
        let trash = area(in: folder)
        if unsafe mkdir(trash.path, 0o700) != 0 && errno != EEXIST { throw FileError(.mkdir, trash.path) }
        var target = name
        var attempt = 1
        while FileSystem.exists(trash.path + "/" + target) {
            attempt += 1
            target = "\(name).\(attempt)"
        }
        try FileSystem.rename(try FolderEntry(name, inside: folder), to: try FolderEntry(trash.name + "/" + target, inside: folder), inFolder: folder)
    }

    /// Deletes this process's trash in `folder` here for at most `budget`, and hands what is left to
    /// a detached child (`emptyDetached`): a small trash is gone when this returns, a large one
    /// does not hold up the caller for longer than `budget`.
    package static func empty(in folder: String, within budget: Duration) {
        let trash = area(in: folder)
        guard FileSystem.exists(trash.path) else { return }
        if (try? remove(trash.path, before: ContinuousClock.now + budget)) == true { return }
        emptyDetached(in: folder)
    }

    /// Removes `path` and what is below it (links are removed, never followed) until `deadline`;
    /// true when all of it is gone.
    private static func remove(_ path: String, before deadline: ContinuousClock.Instant) throws(FileError) -> Bool {
        guard let info = try FileSystem.status(path) else { return true }
        if info.isDirectory {
            for entry in try DirectoryWalker.entries(of: path) {
                guard ContinuousClock.now < deadline, try remove(path + "/" + entry, before: deadline) else { return false }
            }
            if unsafe rmdir(path) != 0 && errno != ENOENT { throw FileError(.rmdir, path) }
        } else if unsafe unlink(path) != 0 && errno != ENOENT {
            throw FileError(.unlink, path)
        }
        return true
    }

    /// Starts deleting this process's trash in `folder`, if there is one, in a detached child
    /// (`rm -rf`, in a session of its own and holding none of this process's descriptors), and
    /// returns at once: the deletion goes on after this process exits. Where no child can be
    /// started, the trash is deleted here.
    package static func emptyDetached(in folder: String) {
        let trash = area(in: folder)
        guard FileSystem.exists(trash.path) else { return }
        #if os(Linux) && !MAPPACK_PORTABLE
            for remover in ["/bin/rm", "/usr/bin/rm"] where unsafe access(remover, X_OK) == 0 {
                let arguments = [remover, "-rf", "--", trash.path]
                var pointers = unsafe arguments.map { unsafe strdup($0) }
                unsafe pointers.append(nil)
                var environment: [UnsafeMutablePointer<CChar>?] = unsafe [nil]
                let child = unsafe mp_spawn_detached(remover, &pointers, &environment)
                // `forEach`, not a `for unsafe … in` loop: swift-format 6.3.1 drops the space after that `unsafe` (swift-format#1183).
                // swift-format-ignore: ReplaceForEachWithForLoop
                unsafe pointers.forEach { unsafe free($0) }
                if child > 0 {
                    removers.withLock { $0.append(child) }
                    return
                }
            }
        #endif
        try? FileSystem.removeTree(trash.path)
    }

    /// Waits until the children `emptyDetached` started are done, then deletes what is still in
    /// this process's trash in `folder`, so a run that succeeded leaves no trash behind.
    package static func waitForRemovals(in folder: String) {
        let children = removers.withLock { children in
            defer { children = [] }
            return children
        }
        for child in children {
            var status: Int32 = 0
            _ = try? FileDescriptor.retryOnInterrupt { unsafe waitpid(child, &status, 0) }
        }
        // What was put there after the child started, or what it left (another process may have
        // reaped it early); a listing can fail while a child still deletes, so try again.
        let trash = area(in: folder).path
        for _ in 0..<100 where FileSystem.exists(trash) { try? FileSystem.removeTree(trash) }
    }
}
