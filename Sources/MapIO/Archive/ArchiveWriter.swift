import CArchive
import Foundation

/// Writes deterministic `.tar.zst` files (`archive_write_*`): pax-restricted tar, fixed
/// mtime, uid/gid 0, no owner names, modes 0644/0755, zstd at a fixed level.
@safe package final class ArchiveWriter {
    private let archive: OpaquePointer
    private let entry: OpaquePointer
    private let path: String
    private let mtime: Int
    /// The read buffer for file contents, borrowed (a publish opens one writer per bundle).
    private let buffer = unsafe ScratchBuffers.take(ReadableFile.chunkSize)

    /// Creates `path` (replacing it), stamping every entry with `mtime` (seconds since 1970);
    /// `compressed: false` writes a plain `.tar` (what zchunk compresses, issue 21).
    package init(path: String, mtime: Int, level: Int = 3, compressed: Bool = true) throws(ArchiveError) {
        self.path = path
        self.mtime = mtime
        unsafe archive = archive_write_new()
        unsafe entry = archive_entry_new()
        unsafe archive_write_set_format_pax_restricted(archive)
        if compressed {
            unsafe archive_write_add_filter_zstd(archive)
            unsafe archive_write_set_filter_option(archive, "zstd", "compression-level", String(level))
        }
        // Whole 10 KiB records are the tar default; keep it so stock tools agree on padding.
        if unsafe archive_write_open_filename(archive, path) != ARCHIVE_OK {
            throw unsafe .malformed(String(cString: archive_error_string(archive)))
        }
    }

    deinit {
        unsafe archive_entry_free(entry)
        unsafe archive_write_free(archive)
        unsafe ScratchBuffers.give(buffer)
    }

    private func check(_ code: Int32) throws(ArchiveError) {
        if code < ARCHIVE_WARN { throw .malformed(unsafe "\(path): " + String(cString: archive_error_string(archive))) }
    }

    private func header(_ name: String, type: UInt32, mode: mode_t, size: Int64) throws(ArchiveError) {
        unsafe archive_entry_clear(entry)
        unsafe archive_entry_set_pathname(entry, name)
        unsafe archive_entry_set_filetype(entry, type)
        unsafe archive_entry_set_perm(entry, mode)
        unsafe archive_entry_set_size(entry, size)
        unsafe archive_entry_set_mtime(entry, mtime, 0)
        unsafe archive_entry_set_uid(entry, 0)
        unsafe archive_entry_set_gid(entry, 0)
        try unsafe check(archive_write_header(archive, entry))
    }

    /// Adds a directory entry named `name` (no trailing slash).
    package func addDirectory(_ name: String) throws(ArchiveError) {
        try header(name, type: MP_AE_IFDIR, mode: 0o755, size: 0)
    }

    /// Adds a regular file named `name` with the bytes of the file at `source`, streamed. `stop` is asked
    /// before each buffer: a large file (a cache seed of hundreds of MB) is not compressed to its end
    /// once the caller wants to stop (`ArchiveError.stopped`; the archive is then incomplete).
    package func addFile(_ name: String, from source: String, size: Int64, stop: () -> Bool = { false }) throws(ArchiveError) {
        try header(name, type: MP_AE_IFREG, mode: 0o644, size: size)
        do {
            let file = try ReadableFile(path: source)
            var written: Int64 = 0
            while true {
                if stop() { throw ArchiveError.stopped(entry: name) }
                let n = try unsafe file.read(into: buffer)
                if n == 0 { break }
                let w = unsafe archive_write_data(archive, buffer.baseAddress, n)
                if w < 0 { throw ArchiveError.malformed(unsafe "\(path): " + String(cString: archive_error_string(archive))) }
                written += Int64(n)
            }
            if written != size { throw ArchiveError.malformed("\(source) changed size while being archived") }
        } catch let error as FileError {
            throw .io(error)
        } catch let error as ArchiveError {
            throw error
        } catch {
            throw .malformed("\(error)")
        }
    }

    /// Adds a regular file with in-memory bytes.
    package func addFile(_ name: String, data: Data) throws(ArchiveError) {
        try header(name, type: MP_AE_IFREG, mode: 0o644, size: Int64(data.count))
        let written = unsafe data.withUnsafeBytes { unsafe archive_write_data(archive, $0.baseAddress, $0.count) }
        if written < 0 { throw .malformed(unsafe "\(path): " + String(cString: archive_error_string(archive))) }
    }

    /// Adds every directory and regular file under `root` in sorted path order, names prefixed by `prefix`.
    package func addTree(_ root: String, prefix: String = "") throws(ArchiveError) {
        let entries: [DirectoryWalker.Entry]
        do { entries = try DirectoryWalker.walk(root) } catch { throw .io(error) }
        for item in entries {
            let name = prefix + item.relativePath
            if item.isDirectory {
                try addDirectory(name)
            } else if item.isRegular {
                try addFile(name, from: root + "/" + item.relativePath, size: item.size)
            } else {
                throw .forbiddenType(entry: item.relativePath, type: "special file")
            }
        }
    }

    /// Finishes the archive (`archive_write_close`) and fsyncs it.
    package func finish() throws(ArchiveError) {
        try unsafe check(archive_write_close(archive))
        do { try FileSystem.syncFile(path) } catch { throw .io(error) }
    }
}

extension ArchiveWriter {
    /// The linked libarchive's version (`archive_version_string`).
    package static var libraryVersion: String { unsafe String(cString: archive_version_string()) }
}
