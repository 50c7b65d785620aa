import Foundation

/// A new file written sequentially, fsynced before it is called done.
package final class WritableFile {
    /// Where it is being written.
    package let path: String
    private var descriptor: Int32

    /// Creates (or truncates, or appends to) `path`; a file it creates gets `permissions` (less the
    /// umask) from its first byte on. A symbolic link at `path` is refused (`O_NOFOLLOW`, `ELOOP`):
    /// mappack never writes through one, so a link planted in a cache or staging folder cannot
    /// redirect a write.
    package init(path: String, append: Bool = false, exclusive: Bool = false, permissions: mode_t = 0o644) throws(FileError) {
        self.path = path
        var flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW
        flags |= append ? O_APPEND : O_TRUNC
        if exclusive { flags |= O_EXCL }
        descriptor = open(path, flags, permissions)
        if descriptor < 0 { throw FileError("open", path) }
    }

    deinit { if descriptor >= 0 { Foundation.close(descriptor) } }

    /// Writes all of `bytes`.
    package func write(_ bytes: UnsafeRawBufferPointer) throws(FileError) {
        try FileSystem.writeAll(bytes, to: descriptor, path: path)
    }

    /// Writes all of `data`.
    package func write(_ data: Data) throws(FileError) {
        let failure: FileError? = data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> FileError? in
            do throws(FileError) { try write(raw); return nil } catch { return error }
        }
        if let failure { throw failure }
    }

    /// Overwrites bytes at `offset` (`pwrite`), leaving the append position alone.
    package func write(_ data: Data, at offset: Int64) throws(FileError) {
        let failure: FileError? = data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> FileError? in
            do throws(FileError) { try FileSystem.writeAll(raw, to: descriptor, at: offset, path: path); return nil } catch { return error }
        }
        if let failure { throw failure }
    }

    /// Flushes the file's data to stable storage (`fsync`).
    package func sync() throws(FileError) {
        if fsync(descriptor) != 0 { throw FileError("fsync", path) }
    }

    /// Closes the file, fsyncing first when `sync`.
    package func close(sync: Bool) throws(FileError) {
        if sync { try self.sync() }
        let fd = descriptor
        descriptor = -1
        if Foundation.close(fd) != 0 { throw FileError("close", path) }
    }
}
