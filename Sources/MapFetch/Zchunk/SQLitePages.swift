import Foundation
import MapIO

/// Where a plain tar holds SQLite databases (issue 21). SQLite writes a database in fixed pages (a
/// power of two from 512 bytes to 64 KiB) and changes them in place, so an edit of a few rows
/// rewrites a few pages and leaves every other byte where it was. A chunk size is a power of two
/// too, so cutting a database every `chunkSize` bytes from its start puts every cut on a page
/// boundary: an edited page costs its own chunks and nothing around it (a content-defined cut lays
/// chunks across page boundaries, and an edited page then costs the two chunks it overlaps).
enum SQLitePages {
    /// The first 16 bytes of every SQLite 3 database.
    static let magic: [UInt8] = Array("SQLite format 3\u{0}".utf8)
    /// A tar header's size.
    static let block = 512

    /// The data of every regular-file member of the tar at `path` that is a SQLite database (at
    /// least one 512-byte page, starting with `magic`), in order. Reading stops at the tar's end
    /// marker, at the first block that is not a header it can read, or at a member that would end
    /// past the file's end. The publisher and the device
    /// read tars that `ArchiveWriter` wrote, the same way, so they find the same ranges.
    static func databases(inTar path: String) throws(ZchunkError) -> [Range<Int64>] {
        let file: FileDescriptor
        do { file = try unsafe FileDescriptor.open(path, .readOnly) } catch { throw .io(FileError(.open, path, code: error.code)) }
        defer { try? file.close() }
        let fileSize: Int64
        do { fileSize = try file.status().size } catch { throw .io(FileError(.stat, path, code: error.code)) }
        func read(_ count: Int, at offset: Int64) throws(ZchunkError) -> [UInt8] {
            do { return try file.readAll(fromAbsoluteOffset: offset, count: count) } catch { throw .io(FileError(.read, path, code: error.code)) }
        }
        var out: [Range<Int64>] = []
        var offset: Int64 = 0
        while offset + Int64(block) <= fileSize {
            let header = try read(block, at: offset)
            let data = offset + Int64(block)
            guard let size = memberSize(header), data + size <= fileSize else { break }
            let type = header[156]
            if type == UInt8(ascii: "0") || type == 0, size >= Int64(block), try read(magic.count, at: data) == magic {
                out.append(data..<data + size)
            }
            offset = data + (size + Int64(block) - 1) / Int64(block) * Int64(block)
        }
        return out
    }

    /// A tar header's member size: octal digits (space- or NUL-ended), or base-256 when the field's
    /// first byte has its high bit set. nil for the end marker (a block of zeros), a size that is
    /// neither, or one of a petabyte or more.
    static func memberSize(_ header: [UInt8]) -> Int64? {
        guard header.count >= block, header.contains(where: { $0 != 0 }) else { return nil }
        let field = header[124..<136]
        let limit: Int64 = 1 << 50
        var value: Int64 = 0
        if field[124] & 0x80 != 0 {
            guard field[124] == 0x80 else { return nil }
            for byte in field.dropFirst() {
                value = value << 8 | Int64(byte)
                if value >= limit { return nil }
            }
            return value
        }
        var digits = 0
        for byte in field.drop(while: { $0 == UInt8(ascii: " ") }) {
            if byte == 0 || byte == UInt8(ascii: " ") { break }
            guard (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(byte) else { return nil }
            value = value * 8 + Int64(byte - UInt8(ascii: "0"))
            digits += 1
            if value >= limit { return nil }
        }
        return digits > 0 ? value : nil
    }
}
