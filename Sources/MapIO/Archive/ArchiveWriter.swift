import CArchive
import CZstd
import Foundation

/// Writes deterministic `.tar.zst` files: pax-restricted tar from libarchive (`archive_write_*`),
/// fixed mtime, uid/gid 0, no owner names, modes 0644/0755; compressed here, one zstd frame at a
/// fixed level through a compression context reused from archive to archive (`ZstdCompressor`).
/// libarchive's own zstd filter made a fresh context per archive, several MiB of workspace mapped and
/// unmapped each time, three quarters of a full publish's CPU (issue 46). The bytes are the filter's:
/// the same tar stream (the last record not padded, as libarchive leaves it for a file), the same
/// frame (`ZSTD_compressStream2` at the level, the size not pledged, ended by an empty `ZSTD_e_end`).
@safe package final class ArchiveWriter {
    private let archive: OpaquePointer
    private let entry: OpaquePointer
    private let path: String
    private let mtime: Int
    /// The read buffer for file contents, borrowed (a publish opens one writer per bundle).
    private let buffer = unsafe ScratchBuffers.take(ReadableFile.chunkSize)
    /// The compressed file and its compressor; nil for a plain `.tar`, which libarchive writes itself.
    private let output: CompressedOutput?
    /// Why the last write to `output` failed (libarchive only learns that it did).
    private var outputFailure: ArchiveError?

    /// Creates `path` (replacing it), stamping every entry with `mtime` (seconds since 1970);
    /// `compressed: false` writes a plain `.tar` (what zchunk compresses, issue 21).
    package init(path: String, mtime: Int, level: Int = 3, compressed: Bool = true) throws(ArchiveError) {
        self.path = path
        self.mtime = mtime
        unsafe archive = archive_write_new()
        unsafe entry = archive_entry_new()
        unsafe archive_write_set_format_pax_restricted(archive)
        guard compressed else {
            output = nil
            // Whole 10 KiB records are the tar default; keep it so stock tools agree on padding.
            if unsafe archive_write_open_filename(archive, path) != ARCHIVE_OK {
                throw unsafe .malformed(String(cString: archive_error_string(archive)))
            }
            return
        }
        let output: CompressedOutput
        do { output = try CompressedOutput(path: path, level: Int32(level)) } catch { throw .io(error) }
        self.output = output
        // The tar stream as libarchive's zstd filter received it: its last record is not padded
        // (libarchive pads only for a device or a pipe).
        unsafe archive_write_set_bytes_in_last_block(archive, 1)
        let opened = unsafe archive_write_open2(
            archive, Unmanaged.passUnretained(self).toOpaque(), nil,
            { _, client, bytes, count in
                guard let client = unsafe client, let bytes = unsafe bytes else { return -1 }
                let writer = unsafe Unmanaged<ArchiveWriter>.fromOpaque(client).takeUnretainedValue()
                return unsafe writer.compress(UnsafeRawBufferPointer(start: bytes, count: count)) ? count : -1
            }, nil, nil)
        if opened != ARCHIVE_OK { throw unsafe .malformed(String(cString: archive_error_string(archive))) }
    }

    /// libarchive's write callback: `bytes` of tar into the frame; false (and `outputFailure`) on failure.
    private func compress(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let output else { return false }
        do { try unsafe output.compress(bytes, ending: false) } catch {
            outputFailure = error
            return false
        }
        return true
    }

    deinit {
        // An archive not finished is dropped, not closed: closing would write through the callback
        // into a writer that is going away.
        if output != nil { unsafe archive_write_fail(archive) }
        unsafe archive_entry_free(entry)
        unsafe archive_write_free(archive)
        unsafe ScratchBuffers.give(buffer)
    }

    private func check(_ code: Int32) throws(ArchiveError) {
        if let outputFailure { throw outputFailure }
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
                if w < 0 {
                    if let outputFailure { throw outputFailure }
                    throw ArchiveError.malformed(unsafe "\(path): " + String(cString: archive_error_string(archive)))
                }
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
        if written < 0 {
            if let outputFailure { throw outputFailure }
            throw .malformed(unsafe "\(path): " + String(cString: archive_error_string(archive)))
        }
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

    /// Finishes the archive (`archive_write_close`, then the frame's end) and fsyncs it.
    package func finish() throws(ArchiveError) {
        try unsafe check(archive_write_close(archive))
        guard let output else {
            do { try FileSystem.syncFile(path) } catch { throw .io(error) }
            return
        }
        try unsafe output.compress(UnsafeRawBufferPointer(start: nil, count: 0), ending: true)
        do { try output.file.close(sync: true) } catch { throw .io(error) }
    }
}

extension ArchiveWriter {
    /// The `.tar.zst` being written: the file, a pooled compression context and its output buffer.
    @safe private final class CompressedOutput {
        let file: WritableFile
        private let compressor: ZstdCompressor
        private let out = unsafe ScratchBuffers.take(ZstdCompressor.outputSize)

        init(path: String, level: Int32) throws(FileError) {
            file = try WritableFile(path: path)
            compressor = ZstdCompressor.take(level: level)
        }

        deinit {
            ZstdCompressor.give(compressor)
            unsafe ScratchBuffers.give(out)
        }

        /// Feeds `bytes` to the frame, writing what it yields; with `ending`, ends the frame and writes
        /// the rest.
        func compress(_ bytes: UnsafeRawBufferPointer, ending: Bool) throws(ArchiveError) {
            try unsafe compressor.compress(bytes, ending: ending, into: out) { chunk throws(ArchiveError) in
                do throws(FileError) { try unsafe file.write(chunk) } catch { throw .io(error) }
            }
        }
    }
}

extension ArchiveWriter {
    /// The linked libarchive's version (`archive_version_string`).
    package static var libraryVersion: String { unsafe String(cString: archive_version_string()) }
}
