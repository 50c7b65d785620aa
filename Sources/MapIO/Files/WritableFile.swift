import Foundation

/// A new file written sequentially, fsynced before it is called done.
package final class WritableFile {
    /// Where it is being written.
    package let path: String
    /// Open until `close`, then -1.
    private var descriptor: FileDescriptor

    /// Creates (or truncates, or appends to) `path`; a file it creates gets `permissions` (less the
    /// umask) from its first byte on. A symbolic link at `path` is refused (`O_NOFOLLOW`, `ELOOP`):
    /// mappack never writes through one, so a link planted in a cache or staging folder cannot
    /// redirect a write.
    package init(path: String, append: Bool = false, exclusive: Bool = false, permissions: mode_t = 0o644) throws(FileError) {
        self.path = path
        var options: FileDescriptor.OpenOptions = [.create, append ? .append : .truncate]
        if exclusive { options.insert(.exclusive) }
        do { descriptor = try unsafe FileDescriptor.open(path, .writeOnly, options: options, permissions: permissions) } catch {
            throw FileError(.open, path, code: error.code)
        }
    }

    deinit { if descriptor.rawValue >= 0 { try? descriptor.close() } }

    /// Writes all of `bytes`.
    package func write(_ bytes: UnsafeRawBufferPointer) throws(FileError) {
        do { try unsafe descriptor.writeAll(bytes) } catch { throw FileError(.write, path, code: error.code) }
    }

    /// Writes all of `data`.
    package func write(_ bytes: RawSpan) throws(FileError) {
        // Untyped inside: a typed-throws closure given to withUnsafeBytes crashes Swift 6.3.1.
        let failure: FileError? = unsafe bytes.withUnsafeBytes { raw in
            do { try unsafe write(raw) } catch { return error as? FileError }
            return nil
        }
        if let failure { throw failure }
    }

    package func write(_ data: Data) throws(FileError) {
        let failure: FileError? = unsafe data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> FileError? in
            do throws(FileError) {
                try unsafe write(raw)
                return nil
            } catch { return error }
        }
        if let failure { throw failure }
    }

    /// Overwrites bytes at `offset` (`pwrite`), leaving the append position alone.
    package func write(_ data: Data, at offset: Int64) throws(FileError) {
        let failure: FileError? = unsafe data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> FileError? in
            do throws(Errno) {
                try unsafe descriptor.writeAll(toAbsoluteOffset: offset, raw)
                return nil
            } catch { return FileError(.write, path, code: error.code) }
        }
        if let failure { throw failure }
    }

    /// Makes this new, empty file share all of `source`'s data (`FileDescriptor.cloneContents`);
    /// false when the filesystem cannot, and nothing was written.
    package func clone(_ source: ReadableFile) throws(FileError) -> Bool {
        do { return try descriptor.cloneContents(of: source.descriptor) } catch { throw FileError(.clone, path, code: error.code) }
    }

    /// Flushes the file's data to stable storage (`fsync`).
    package func sync() throws(FileError) {
        do { try descriptor.sync() } catch { throw FileError(.fsync, path, code: error.code) }
    }

    /// Starts writing the file's data back without waiting for it (`Writeback.start`): not
    /// durable on its own, the tree it belongs to is synced before anything shows it.
    package func startWriteback(_ writeback: Writeback) { writeback.start(descriptor) }

    /// Closes the file, fsyncing first when `sync`.
    package func close(sync: Bool) throws(FileError) {
        if sync { try self.sync() }
        let file = descriptor
        descriptor = FileDescriptor(rawValue: -1)
        do { try file.close() } catch { throw FileError(.close, path, code: error.code) }
    }
}
