import CLinux
import Foundation
import Synchronization

/// Durable file operations over POSIX calls: fsync of files and folders, atomic rename, tree removal.
package enum FileSystem {
    /// Metadata of one path (from `lstat`).
    package struct Status: Sendable {
        package let isDirectory: Bool
        package let isRegular: Bool
        package let isSymlink: Bool
        package let size: Int64
        /// Allocated bytes (`st_blocks * 512`).
        package let allocated: Int64
        package let device: UInt64
        package let inode: UInt64
        /// Last modification and last status change, nanoseconds since 1970.
        package let modifiedNanoseconds: Int64
        package let changedNanoseconds: Int64

        /// Device, inode, size, modification and change times: differs whenever the file was replaced
        /// or written (a status change cannot be backdated), so a value derived from its bytes can be kept.
        package var identity: String { "\(device):\(inode):\(size):\(modifiedNanoseconds):\(changedNanoseconds)" }

        /// The fields of `info` (from `lstat`, `fstat` or `fstatat`).
        init(_ info: stat) {
            let type = info.st_mode & S_IFMT
            isDirectory = type == S_IFDIR
            isRegular = type == S_IFREG
            isSymlink = type == S_IFLNK
            size = Int64(info.st_size)
            allocated = Int64(info.st_blocks) * 512
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            // POSIX.1-2008 names the times `st_mtim` and `st_ctim`; Darwin names them `…spec`.
            #if canImport(Darwin)
                let (modified, changed) = (info.st_mtimespec, info.st_ctimespec)
            #else
                let (modified, changed) = (info.st_mtim, info.st_ctim)
            #endif
            modifiedNanoseconds = Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec)
            changedNanoseconds = Int64(changed.tv_sec) * 1_000_000_000 + Int64(changed.tv_nsec)
        }
    }

    /// `lstat` of `path`, nil when it does not exist.
    package static func status(_ path: String) throws(FileError) -> Status? {
        var info = stat()
        if unsafe lstat(path, &info) != 0 {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw FileError(.lstat, path)
        }
        return Status(info)
    }

    /// True when something exists at `path`.
    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return unsafe lstat(path, &info) == 0
    }

    /// True when `path` is a directory (not following symlinks).
    package static func isDirectory(_ path: String) -> Bool { ((try? status(path)) ?? nil)?.isDirectory ?? false }

    /// The folder part of `path` (`a/b/c` → `a/b`, `/a` → `/`, `a` → `.`). On bytes: `/` is ASCII.
    package static func parent(_ path: String) -> String {
        let (trimmed, slash) = lastSlash(path)
        guard let slash else { return "." }
        return slash == trimmed.startIndex ? "/" : String(path[..<slash])
    }

    /// The last component of `path`.
    package static func lastComponent(_ path: String) -> String {
        let (trimmed, slash) = lastSlash(path)
        guard let slash else { return String(path[..<trimmed.endIndex]) }
        return String(path[trimmed.index(after: slash)..<trimmed.endIndex])
    }

    /// `path`'s bytes without trailing slashes (one kept for `/`), and the position of the last slash left.
    private static func lastSlash(_ path: String) -> (Substring.UTF8View, String.Index?) {
        var trimmed = path[...].utf8
        while trimmed.count > 1 && trimmed.last == UInt8(ascii: "/") { trimmed = trimmed.dropLast() }
        return (trimmed, trimmed.lastIndex(of: UInt8(ascii: "/")))
    }

    /// Creates `path` and missing parents (mode 0755).
    package static func makeDirectories(_ path: String) throws(FileError) {
        if isDirectory(path) { return }
        let parent = parent(path)
        if parent != path, parent != ".", !isDirectory(parent) { try makeDirectories(parent) }
        if unsafe mkdir(path, 0o755) != 0 && errno != EEXIST { throw FileError(.mkdir, path) }
    }

    /// Asks the filesystem to place each new subfolder of the folder `path` away from it, where it
    /// places top-level folders (`FS_TOPDIR_FL`: ext4's Orlov allocator picks a block group with room),
    /// for a folder that receives many trees of their own (an import's bundle folders). ext4 without a
    /// journal passes over every inode freed in the last seconds in a group for each new inode it
    /// places there, so a tree written where a large one was just deleted (a rerun after `rm -rf`)
    /// costs time quadratic in its size; spread out, each tree lands in a group of its own. A hint:
    /// nothing happens where the flag is not offered, and no file's bytes or names change.
    package static func spreadSubfolders(_ path: String) {
        unsafe FileDescriptor.currentWorkingDirectory.spreadSubfolders(of: path)
    }

    /// Creates `path` and missing parents (mode 0755) and fsyncs the parent of each folder it created,
    /// so the new folders survive power loss (a storage or cache root whose own name is lost takes
    /// everything inside it along, fsynced or not).
    package static func makeDirectoriesDurably(_ path: String) throws(FileError) {
        if isDirectory(path) { return }
        let parent = parent(path)
        if parent != path, parent != ".", !isDirectory(parent) { try makeDirectoriesDurably(parent) }
        if unsafe mkdir(path, 0o755) != 0 && errno != EEXIST { throw FileError(.mkdir, path) }
        try syncDirectory(parent)
    }

    /// Makes `path` durable: a regular file, or a folder with every regular file and folder below it,
    /// so a tree written without syncs is on disk before a rename shows it. On the local filesystems
    /// of `syncfsFilesystems` that is one `syncfs`; elsewhere every file and folder is fsynced (`path`
    /// last).
    ///
    /// Those fsyncs run on `syncThreads` threads at once: each one mostly waits for the
    /// filesystem's journal, and a journal commits the fsyncs that wait together in one write (group
    /// commit), so a 58,000-file image syncs in a fraction of the time one fsync after another takes.
    /// Their order does not matter: nothing shows the tree until the rename after all of them.
    package static func syncTree(_ path: String) throws(FileError) {
        guard let info = try status(path) else { throw FileError(.fsync, path, code: ENOENT) }
        guard info.isDirectory else { return try syncFile(path) }
        if try syncWholeFilesystem(holding: path) { return }
        let entries = try DirectoryWalker.walk(path)
        let files = entries.filter(\.isRegular).map { path + "/" + $0.relativePath }
        let folders = entries.filter(\.isDirectory).map { path + "/" + $0.relativePath }
        try syncAll(files, options: .followLinks)
        try syncAll(folders, options: [.directory, .followLinks])
        try syncDirectory(path)
    }

    /// Local filesystems whose `syncfs` puts every file's data and every folder's entries on disk:
    /// ext2/3/4, XFS, Btrfs, F2FS, tmpfs (statfs magic numbers). Not FUSE (the kernel does not pass
    /// `syncfs` on to a FUSE server; only each file's fsync reaches it) nor network filesystems.
    static let syncfsFilesystems: Set<Int> = [0xEF53, 0x5846_5342, 0x9123_683E, 0xF2F5_2010, 0x0102_1994]

    /// On Linux, `syncfs` of the filesystem holding `path` when it is one of `syncfsFilesystems`:
    /// one call instead of an fsync per file and folder (a 58,000-file image: 2.6 s to build without
    /// syncs, 37 s with an fsync each, 10–14 s with them on 16 threads). False when it does not apply.
    private static func syncWholeFilesystem(holding path: String) throws(FileError) -> Bool {
        #if os(Linux) && !MAPPACK_PORTABLE
            let folder: FileDescriptor
            do { folder = try unsafe FileDescriptor.open(path, .readOnly, options: [.directory, .followLinks]) } catch {
                throw FileError(.open, path, code: error.code)
            }
            defer { try? folder.close() }
            guard syncfsFilesystems.contains(mp_filesystem_type(folder.rawValue)) else { return false }
            if mp_syncfs(folder.rawValue) != 0 { throw FileError(.syncfs, path) }
            return true
        #else
            return false
        #endif
    }

    /// Threads `syncTree` fsyncs on.
    static let syncThreads = 16

    /// fsyncs every path of `paths` on up to `syncThreads` threads; the first failure is thrown once all have stopped.
    private static func syncAll(_ paths: [String], options: FileDescriptor.OpenOptions) throws(FileError) {
        if paths.count < 64 {
            for path in paths { try sync(path, options: options) }
            return
        }
        let next = Atomic<Int>(0)
        let failure = Mutex<FileError?>(nil)
        let group = DispatchGroup()
        for _ in 0..<min(syncThreads, paths.count) {
            group.enter()
            Thread {
                defer { group.leave() }
                while failure.withLock({ $0 == nil }) {
                    let index = next.add(1, ordering: .relaxed).oldValue
                    guard index < paths.count else { return }
                    do throws(FileError) { try sync(paths[index], options: options) } catch { failure.withLock { if $0 == nil { $0 = error } } }
                }
            }.start()
        }
        group.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// Flushes a directory's entries to stable storage, so renames and creations in it survive power loss.
    package static func syncDirectory(_ path: String) throws(FileError) {
        try sync(path, options: [.directory, .followLinks])
    }

    /// Flushes a regular file's data.
    package static func syncFile(_ path: String) throws(FileError) {
        try sync(path, options: .followLinks)
    }

    private static func sync(_ path: String, options: FileDescriptor.OpenOptions) throws(FileError) {
        let file: FileDescriptor
        do { file = try unsafe FileDescriptor.open(path, .readOnly, options: options) } catch { throw FileError(.open, path, code: error.code) }
        defer { try? file.close() }
        do { try file.sync() } catch { throw FileError(.fsync, path, code: error.code) }
    }

    /// `rename(2)`: atomic replacement of a file or an empty directory.
    package static func rename(_ from: String, to: String) throws(FileError) {
        if unsafe Foundation.rename(from, to) != 0 { throw FileError(.rename, note: "to \(to)", from) }
    }

    /// True when `name` is one plain entry name: not empty, not hidden (no leading `.`, so never `.` or
    /// `..`), and without `/` or NUL.
    package static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix(".") && !name.contains("/") && !name.contains("\0")
    }

    /// Renames `from` to `to`, both relative to the folder `root` (`renameat` against the folder's
    /// descriptor); as `FolderEntry`s neither can reach outside `root`.
    package static func rename(_ from: FolderEntry, to: FolderEntry, inFolder root: String) throws(FileError) {
        let folder: FileDescriptor
        do { folder = try unsafe FileDescriptor.open(root, .readOnly, options: [.directory, .followLinks]) } catch {
            throw FileError(.open, root, code: error.code)
        }
        defer { try? folder.close() }
        do { try unsafe folder.rename(from.path, to: to.path) } catch {
            throw FileError(.rename, note: "to \(root)/\(to)", root + "/" + from.path, code: error.code)
        }
    }

    /// Removes `path` and everything below it; nothing when absent. Never follows symlinks.
    package static func removeTree(_ path: String) throws(FileError) {
        guard let info = try status(path) else { return }
        if info.isDirectory {
            for entry in try DirectoryWalker.entries(of: path) { try removeTree(path + "/" + entry) }
            if unsafe rmdir(path) != 0 && errno != ENOENT { throw FileError(.rmdir, path) }
        } else if unsafe unlink(path) != 0 && errno != ENOENT {
            throw FileError(.unlink, path)
        }
    }

    /// Makes `target` (which must not exist) another name of the file at `source` (`linkat`, a link
    /// at `source` not followed).
    package static func hardLink(_ source: String, to target: String) throws(FileError) {
        if unsafe linkat(AT_FDCWD, source, AT_FDCWD, target, 0) != 0 { throw FileError(.link, target) }
    }

    /// Removes a file; nothing when absent.
    package static func removeFile(_ path: String) throws(FileError) {
        if unsafe unlink(path) != 0 && errno != ENOENT { throw FileError(.unlink, path) }
    }

    /// Writes `data` to `path` durably: a temporary file beside it, fsync, rename, fsync of the folder.
    /// The temporary file is made afresh (`O_EXCL`), so neither a link planted at its name nor an
    /// old file's mode carries over; the rename replaces a link at `path` rather than following it.
    package static func writeAtomically(_ data: Data, to path: String, permissions: mode_t = 0o644) throws(FileError) {
        let name = lastComponent(path)
        let temporary = StagingArea(for: name, kind: .temporary, in: parent(path))
        unsafe unlink(temporary.path)
        let file = try WritableFile(path: temporary.path, exclusive: true, permissions: permissions)
        do throws(FileError) {
            try file.write(data)
            try file.close(sync: true)
            try temporary.commit(as: name)
        } catch {
            // A write that failed (a full disk) leaves no temporary file beside `path`.
            unsafe unlink(temporary.path)
            throw error
        }
    }

    /// Free bytes available to unprivileged users on the filesystem holding `path`.
    package static func freeBytes(at path: String) throws(FileError) -> Int64 {
        var info = statvfs()
        if unsafe statvfs(path, &info) != 0 { throw FileError(.statvfs, path) }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// The unit the filesystem holding `path` gives space out in (`statvfs`'s `f_frsize`): a file
    /// takes a whole number of them.
    package static func allocationUnit(at path: String) throws(FileError) -> Int64 {
        var info = statvfs()
        if unsafe statvfs(path, &info) != 0 { throw FileError(.statvfs, path) }
        return Int64(info.f_frsize)
    }

    /// An absolute, `/`-joined form of `path` against the current directory.
    package static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        return FileManager.default.currentDirectoryPath + "/" + path
    }

    /// Copies a regular file, with the destination fsynced; without `sync`, its writeback is
    /// started when `writeback` is given (the caller syncs the tree it is part of). On a filesystem
    /// that can (XFS with reflinks, btrfs) the copy shares the source's extents (`FICLONE`): no
    /// data is read or written, and no space is used until one of the two changes; elsewhere the
    /// bytes are streamed through one buffer.
    package static func copyFile(_ from: String, to: String, sync: Bool = true, writeback: Writeback? = nil) throws(FileError) {
        let source = try ReadableFile(path: from)
        let target = try WritableFile(path: to)
        if try !target.clone(source) {
            try unsafe source.forEachChunk { chunk in try unsafe target.write(chunk) }
        }
        if !sync, let writeback { target.startWriteback(writeback) }
        try target.close(sync: sync)
    }
}
