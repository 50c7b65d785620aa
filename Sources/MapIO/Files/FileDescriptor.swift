import Foundation

/// An open file or folder: a typed POSIX descriptor, in swift-system's manner. Every file and
/// folder mappack opens with a system call (not through SQLite, libarchive's writer or `opendir`)
/// goes through `open(at:_:_:options:permissions:)`, so links are refused
/// (`O_NOFOLLOW`) and descriptors do not leak into child processes (`O_CLOEXEC`) unless a caller
/// says otherwise, and every call that `EINTR` can interrupt is retried in one place
/// (`retryOnInterrupt`). It is a plain value holding the number: no allocation, calls inline to the
/// system call. It does not close itself; the type that owns it does (`close()`, or `deinit` of a
/// class such as `ReadableFile`, `WritableFile`, `DirectoryWalker.OpenDirectory`).
///
/// Where `Unsafe*` is still written in mappack, and why: ARCHITECTURE.md, "Unsafe code".
package struct FileDescriptor: RawRepresentable, Hashable, Sendable {
    /// The descriptor's number.
    package let rawValue: CInt

    /// Wraps a descriptor opened elsewhere (`mkstemp`); the caller hands over closing it.
    @inlinable package init(rawValue: CInt) { self.rawValue = rawValue }

    /// Paths relative to this resolve against the working directory (`AT_FDCWD`).
    package static let currentWorkingDirectory = FileDescriptor(rawValue: AT_FDCWD)

    /// How a file is opened: `O_RDONLY`, `O_WRONLY` or `O_RDWR`.
    package struct AccessMode: RawRepresentable, Hashable, Sendable {
        package let rawValue: CInt
        @inlinable package init(rawValue: CInt) { self.rawValue = rawValue }
        /// `O_RDONLY`.
        package static let readOnly = AccessMode(rawValue: O_RDONLY)
        /// `O_WRONLY`.
        package static let writeOnly = AccessMode(rawValue: O_WRONLY)
        /// `O_RDWR`.
        package static let readWrite = AccessMode(rawValue: O_RDWR)
    }

    /// Flags beyond the access mode. `O_CLOEXEC` and `O_NOFOLLOW` are always set, except that
    /// `followLinks` drops `O_NOFOLLOW`.
    package struct OpenOptions: OptionSet, Hashable, Sendable {
        /// `O_*` flags, plus `followLinks`' bit (no flag of its own).
        package let rawValue: CInt
        @inlinable package init(rawValue: CInt) { self.rawValue = rawValue }

        /// `O_CREAT`.
        package static let create = OpenOptions(rawValue: O_CREAT)
        /// `O_TRUNC`.
        package static let truncate = OpenOptions(rawValue: O_TRUNC)
        /// `O_APPEND`.
        package static let append = OpenOptions(rawValue: O_APPEND)
        /// `O_EXCL`: the file must be new.
        package static let exclusive = OpenOptions(rawValue: O_EXCL)
        /// `O_DIRECTORY`: the path must be a folder.
        package static let directory = OpenOptions(rawValue: O_DIRECTORY)
        /// `O_NONBLOCK`: opening a FIFO or device found where a file was expected does not hang.
        package static let nonBlocking = OpenOptions(rawValue: O_NONBLOCK)
        /// Follow a symbolic link at the path's last component (without it: `ELOOP`).
        package static let followLinks = OpenOptions(rawValue: 1 << 30)
        #if os(Linux) && !MAPPACK_PORTABLE
            /// `O_NOATIME`: reading does not update the access time. Only the owner (or a process with
            /// `CAP_FOWNER`) may ask; others get `EPERM` (`openForReading` then opens without it).
            package static let noAccessTime = OpenOptions(rawValue: __O_NOATIME)
        #else
            /// No such flag here: reading opens plainly.
            package static let noAccessTime: OpenOptions = []
        #endif

        /// The flags `openat` gets.
        @inlinable var flags: CInt {
            let followBit = OpenOptions.followLinks.rawValue
            return (rawValue & ~followBit) | O_CLOEXEC | (rawValue & followBit != 0 ? 0 : O_NOFOLLOW)
        }
    }

    /// Opens `path`, relative to the folder `directory` unless absolute (`openat`); a file it creates
    /// gets `permissions`, less the umask.
    @inlinable
    package static func open(
        at directory: FileDescriptor = .currentWorkingDirectory, _ path: UnsafePointer<CChar>, _ mode: AccessMode,
        options: OpenOptions = [], permissions: mode_t = 0o644
    ) throws(Errno) -> FileDescriptor {
        let flags = mode.rawValue | options.flags
        return FileDescriptor(rawValue: try retryOnInterrupt { unsafe openat(directory.rawValue, path, flags, permissions) })
    }

    /// Opens `path` for reading as `open` does, leaving its access time alone (`noAccessTime`)
    /// while `quietly` holds: a check that reads a whole tree should not write every inode back.
    /// Where the system refuses that (`EPERM`: not the owner), the file is opened plainly and
    /// `quietly` becomes false, so later files are not asked twice.
    @inlinable
    package static func openForReading(
        at directory: FileDescriptor = .currentWorkingDirectory, _ path: UnsafePointer<CChar>, options: OpenOptions = [], quietly: inout Bool
    ) throws(Errno) -> FileDescriptor {
        if quietly {
            do { return try unsafe open(at: directory, path, .readOnly, options: options.union(.noAccessTime)) } catch {
                guard error.code == EPERM else { throw error }
                quietly = false
            }
        }
        return try unsafe open(at: directory, path, .readOnly, options: options)
    }

    /// A new file in `folder` with no name left (`mkstemp`, then `unlink`): scratch space that
    /// disappears with its last descriptor, whatever happens to the process.
    package static func unnamedTemporaryFile(in folder: String, prefix: String) throws(Errno) -> FileDescriptor {
        var template = Array((folder + "/" + prefix + "XXXXXX").utf8CString)
        let made = unsafe template.withUnsafeMutableBufferPointer { unsafe mkstemp($0.baseAddress!) }
        if made < 0 { throw Errno(errno) }
        _ = unsafe template.withUnsafeBufferPointer { unsafe unlink($0.baseAddress!) }
        return FileDescriptor(rawValue: made)
    }

    /// Calls `call` (a system call returning -1 and setting `errno` on failure) again as long as it
    /// fails with `EINTR`; any other failure is thrown.
    @inlinable @inline(__always)
    package static func retryOnInterrupt<Result: FixedWidthInteger & SignedInteger>(_ call: () -> Result) throws(Errno) -> Result {
        while true {
            let result = call()
            if result >= 0 { return result }
            let code = errno
            if code != EINTR { throw Errno(code) }
        }
    }

    /// Reads up to `buffer.count` bytes at the file position (`read`); 0 at the end of the file.
    @inlinable
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try FileDescriptor.retryOnInterrupt { unsafe Foundation.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Reads up to `buffer.count` bytes at `offset` (`pread`); 0 at the end of the file.
    @inlinable
    package func read(fromAbsoluteOffset offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try FileDescriptor.retryOnInterrupt { unsafe pread(rawValue, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    /// Fills all of `buffer` from `offset` (`pread`, repeated); an end of file before that is `EIO`.
    package func readAll(fromAbsoluteOffset offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) {
        var done = 0
        while done < buffer.count {
            let n = try unsafe read(fromAbsoluteOffset: offset + Int64(done), into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]))
            if n == 0 { throw Errno(EIO) }
            done += n
        }
    }

    /// Writes all of `bytes` at the file position (`write`, repeated until done; a write that makes
    /// no progress is `EIO` rather than a loop).
    @inlinable
    package func writeAll(_ bytes: UnsafeRawBufferPointer) throws(Errno) {
        var done = 0
        while done < bytes.count {
            let n = try FileDescriptor.retryOnInterrupt { unsafe Foundation.write(rawValue, bytes.baseAddress! + done, bytes.count - done) }
            if n == 0 { throw Errno(EIO) }
            done += n
        }
    }

    /// Writes all of `bytes` at `offset` (`pwrite`, repeated until done), leaving the file position alone.
    @inlinable
    package func writeAll(toAbsoluteOffset offset: Int64, _ bytes: UnsafeRawBufferPointer) throws(Errno) {
        var done = 0
        while done < bytes.count {
            let n = try FileDescriptor.retryOnInterrupt {
                unsafe pwrite(rawValue, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            }
            if n == 0 { throw Errno(EIO) }
            done += n
        }
    }

    /// Writes all of `bytes` at the file position (`writeAll` of the span's memory).
    package func writeAll(_ bytes: RawSpan) throws(Errno) {
        // Untyped inside: a typed-throws closure given to withUnsafeBytes crashes Swift 6.3.1.
        let failure: Errno? = unsafe bytes.withUnsafeBytes { raw in
            do { try unsafe writeAll(raw) } catch { return error as? Errno ?? Errno(EIO) }
            return nil
        }
        if let failure { throw failure }
    }

    /// Writes all of `bytes` at `offset` (`writeAll(toAbsoluteOffset:_:)` of the span's memory).
    package func writeAll(toAbsoluteOffset offset: Int64, _ bytes: RawSpan) throws(Errno) {
        let failure: Errno? = unsafe bytes.withUnsafeBytes { raw in
            do { try unsafe writeAll(toAbsoluteOffset: offset, raw) } catch { return error as? Errno ?? Errno(EIO) }
            return nil
        }
        if let failure { throw failure }
    }

    /// `count` bytes from `offset` (`readAll(fromAbsoluteOffset:into:)` into a new array).
    package func readAll(fromAbsoluteOffset offset: Int64, count: Int) throws(Errno) -> [UInt8] {
        var failure: Errno?
        let bytes = unsafe [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            do { try unsafe readAll(fromAbsoluteOffset: offset, into: UnsafeMutableRawBufferPointer(buffer)) } catch {
                failure = error as? Errno ?? Errno(EIO)
            }
            initialized = failure == nil ? count : 0
        }
        if let failure { throw failure }
        return bytes
    }

    /// Flushes the file's data, or a folder's entries, to stable storage (`fsync`).
    @inlinable
    package func sync() throws(Errno) {
        if fsync(rawValue) != 0 { throw Errno(errno) }
    }

    /// Closes the descriptor (`close`). Not retried on `EINTR`: on Linux the descriptor is gone then.
    @inlinable
    package func close() throws(Errno) {
        if Foundation.close(rawValue) != 0 { throw Errno(errno) }
    }

    /// What the descriptor refers to (`fstat`).
    package func status() throws(Errno) -> FileSystem.Status {
        var info = stat()
        if unsafe fstat(rawValue, &info) != 0 { throw Errno(errno) }
        return FileSystem.Status(info)
    }

    /// What `name` in this folder is, not following a link (`fstatat` with `AT_SYMLINK_NOFOLLOW`).
    package func status(ofEntry name: UnsafePointer<CChar>) throws(Errno) -> FileSystem.Status {
        var info = stat()
        if unsafe fstatat(rawValue, name, &info, AT_SYMLINK_NOFOLLOW) != 0 { throw Errno(errno) }
        return FileSystem.Status(info)
    }

    /// Makes the folder `name` in this folder (`mkdirat`).
    package func makeDirectory(_ name: UnsafePointer<CChar>, permissions: mode_t = 0o755) throws(Errno) {
        if unsafe mkdirat(rawValue, name, permissions) != 0 { throw Errno(errno) }
    }

    /// Makes the folder named by `name`'s bytes up to its last, a NUL (a relative path built byte by
    /// byte, e.g. by a copy that makes folders as sorted paths come).
    package func makeDirectory(nulTerminated name: [UInt8], permissions: mode_t = 0o755) throws(Errno) {
        precondition(name.last == 0, "a folder name passed to mkdirat ends with a NUL")
        let failed = unsafe name.withUnsafeBufferPointer { bytes in
            unsafe mkdirat(rawValue, UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self), permissions) != 0
        }
        if failed { throw Errno(errno) }
    }

    /// Renames `from` to `to`, both in this folder (`renameat`).
    package func rename(_ from: UnsafePointer<CChar>, to: UnsafePointer<CChar>) throws(Errno) {
        if unsafe renameat(rawValue, from, rawValue, to) != 0 { throw Errno(errno) }
    }

    /// Takes an exclusive `flock` without waiting; false when another descriptor holds it.
    package func tryLock() throws(Errno) -> Bool {
        do throws(Errno) {
            _ = try FileDescriptor.retryOnInterrupt { flock(rawValue, LOCK_EX | LOCK_NB) }
            return true
        } catch  where error.code == EWOULDBLOCK {
            return false
        }
    }
}
