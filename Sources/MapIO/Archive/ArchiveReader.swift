import CArchive
import CZstd
import Foundation

/// One entry of a tar stream as libarchive reports it.
package struct ArchiveEntry: Sendable {
    /// What kind of file system object the entry is.
    package enum Kind: Sendable, Equatable {
        case regular, directory, symlink, hardlink
        case other(String)
    }
    /// The name, or nil when it is not valid UTF-8.
    package let name: String?
    /// The name with invalid bytes replaced, for messages.
    package let printableName: String
    package let kind: Kind
    /// Declared size in bytes.
    package let size: Int64
}

/// Reads a `.tar.zst` stream entry by entry: zstd is decoded here (so the window cap holds)
/// and libarchive sees only a raw tar (`archive_read_open` with a read callback).
package final class ArchiveReader {
    private let archive: OpaquePointer
    private let source: Source
    private var entry: OpaquePointer?

    /// Feeds libarchive from the zstd decoder through one reused buffer.
    private final class Source {
        let decoder: ZstdDecoder
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ZSTD_DStreamOutSize(), alignment: 16)
        var failure: ArchiveError?
        init(decoder: ZstdDecoder) { self.decoder = decoder }
        deinit { buffer.deallocate() }
    }

    /// Opens the `.tar.zst` at `path`; with `hashing`, `compressedDigest()` gives the file's SHA-256.
    package init(path: String, windowLogMax: Int32 = 27, hashing: Bool = false) throws(ArchiveError) {
        source = Source(decoder: try ZstdDecoder(path: path, windowLogMax: windowLogMax, hashing: hashing))
        archive = archive_read_new()
        archive_read_support_format_tar(archive)
        let context = Unmanaged.passUnretained(source).toOpaque()
        if archive_read_open(archive, context, nil, { _, client, out in
            let source = Unmanaged<Source>.fromOpaque(client!).takeUnretainedValue()
            do throws(ArchiveError) {
                let n = try source.decoder.read(into: source.buffer)
                out?.pointee = UnsafeRawPointer(source.buffer.baseAddress)
                return n
            } catch {
                source.failure = error
                return -1
            }
        }, nil) != ARCHIVE_OK {
            // deinit frees the handle: every stored property is set, so a throwing init still runs it.
            throw source.failure ?? .malformed(String(cString: archive_error_string(archive)))
        }
    }

    deinit { archive_read_free(archive) }

    /// Compressed bytes consumed so far.
    package var compressedBytesRead: Int64 { source.decoder.compressedBytesRead }

    /// Hex SHA-256 of the whole compressed file (read to its end); nil unless opened with `hashing`.
    package func compressedDigest() throws(ArchiveError) -> String? { try source.decoder.finishDigest() }

    private func failure() -> ArchiveError {
        if let failure = source.failure { return failure }
        return .malformed(archive_error_string(archive).map { String(cString: $0) } ?? "unknown libarchive error")
    }

    /// The next entry's header (`archive_read_next_header`), or nil at the end.
    package func next() throws(ArchiveError) -> ArchiveEntry? {
        let code = archive_read_next_header(archive, &entry)
        if code == ARCHIVE_EOF { return nil }
        guard code == ARCHIVE_OK || code == ARCHIVE_WARN, let entry else { throw failure() }
        var name: String? = ""
        var printableName = ""
        if let raw = archive_entry_pathname(entry) {
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: strlen(raw))
            name = String(validating: bytes, as: UTF8.self)
            printableName = name ?? String(decoding: bytes, as: UTF8.self)
        }
        let kind: ArchiveEntry.Kind
        if archive_entry_hardlink(entry) != nil {
            kind = .hardlink
        } else {
            switch archive_entry_filetype(entry) {
            case MP_AE_IFREG: kind = .regular
            case MP_AE_IFDIR: kind = .directory
            case MP_AE_IFLNK: kind = .symlink
            case MP_AE_IFCHR: kind = .other("character device")
            case MP_AE_IFBLK: kind = .other("block device")
            case MP_AE_IFIFO: kind = .other("FIFO")
            case MP_AE_IFSOCK: kind = .other("socket")
            default: kind = .other("file of unknown type")
            }
        }
        return ArchiveEntry(name: name, printableName: printableName, kind: kind, size: archive_entry_size(entry))
    }

    /// Reads the current entry's data into `buffer` (`archive_read_data`); 0 at its end.
    package func readData(into buffer: UnsafeMutableRawBufferPointer) throws(ArchiveError) -> Int {
        let n = archive_read_data(archive, buffer.baseAddress, buffer.count)
        if n < 0 { throw failure() }
        return n
    }
}
