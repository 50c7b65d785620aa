import Foundation
import MapFormat

/// One entry of a tar stream.
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

/// Reads a `.tar.zst` stream entry by entry: zstd is decoded by `ZstdDecoder` (so the window cap
/// holds) and the tar headers are parsed here, straight from the decoder's output.
///
/// A bundle is tens of thousands of small entries, and libarchive's reader allocated several
/// times per entry and converted every name to wide characters; this reader allocates nothing per
/// entry beyond the name, and hands out file data where it was decoded (`nextChunk`).
///
/// Understood: ustar and V7 headers (checked by their checksum), POSIX pax extended headers
/// (`path`, `size`; a sparse file is reported as such), GNU long names (`L`) and sizes in base-256.
/// Global pax headers and GNU long link names are skipped. The stream ends at a zero block.
@safe package final class ArchiveReader {
    private let decoder: ZstdDecoder
    private let buffer: UnsafeMutableRawBufferPointer
    /// The decoded bytes not consumed yet: `buffer[start..<end]`.
    private var start = 0
    private var end = 0
    /// Data bytes of the current entry not handed out yet, and the padding after them.
    private var remaining: Int64 = 0
    private var padding = 0
    private var finished = false
    /// Bytes of the tar stream consumed so far, and where the header being read starts (for messages).
    private var offset: Int64 = 0
    private var headerOffset: Int64 = 0

    private static let block = 512
    private static let bufferSize = 256 << 10
    /// Caps on metadata held in memory: a pax header and a GNU long name.
    private static let maxExtendedHeader = 1 << 20
    private static let maxLongName = 64 << 10
    private static let maxSize: Int64 = 1 << 62

    /// Opens the `.tar.zst` at `path`; with `hashing`, `compressedDigest()` gives the file's SHA-256.
    /// The first block is decoded at once, so a file that is not zstd fails here.
    package init(path: String, windowLogMax: Int32 = 27, hashing: Bool = false) throws(ArchiveError) {
        decoder = try ZstdDecoder(path: path, windowLogMax: windowLogMax, hashing: hashing)
        unsafe buffer = ScratchBuffers.take(ArchiveReader.bufferSize)
        _ = try fill(atLeast: 1)
    }

    deinit { unsafe ScratchBuffers.give(buffer) }

    /// Compressed bytes consumed so far.
    package var compressedBytesRead: Int64 { decoder.compressedBytesRead }

    /// Hex SHA-256 of the whole compressed file (read to its end); nil unless opened with `hashing`.
    package func compressedDigest() throws(ArchiveError) -> SHA256Digest? { try decoder.finishDigest() }

    /// Decodes until at least `count` bytes are buffered (moving what is left to the front first);
    /// false when the stream ends before that.
    private func fill(atLeast count: Int) throws(ArchiveError) -> Bool {
        while end - start < count {
            if start > 0 {
                if end > start { unsafe memmove(buffer.baseAddress!, buffer.baseAddress! + start, end - start) }
                end -= start
                start = 0
            }
            let n = try unsafe decoder.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[end...]))
            if n == 0 { return false }
            end += n
        }
        return true
    }

    /// Drops `count` bytes of the stream (data not read, padding).
    private func skip(_ count: Int64) throws(ArchiveError) {
        var left = count
        while left > 0 {
            if start == end {
                start = 0
                end = 0
                guard try fill(atLeast: 1) else { throw truncated() }
            }
            let n = Int(min(Int64(end - start), left))
            start += n
            left -= Int64(n)
        }
        offset += count
    }

    /// The next `count` bytes of the stream as an array (a pax header, a long name).
    private func take(_ count: Int) throws(ArchiveError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            if start == end {
                start = 0
                end = 0
                guard try fill(atLeast: 1) else { throw truncated() }
            }
            let n = min(end - start, count - out.count)
            unsafe out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start..<(start + n)]))
            start += n
        }
        offset += Int64(count)
        return out
    }

    private func truncated() -> ArchiveError { .malformed("the tar stream ends inside an entry (offset \(offset))") }

    private func malformed(_ what: String) -> ArchiveError { .malformed("\(what) (tar header at offset \(headerOffset))") }

    /// The next entry's header, or nil at the end of the stream.
    package func next() throws(ArchiveError) -> ArchiveEntry? {
        if finished { return nil }
        // Whatever the caller did not read of the previous entry.
        try skip(remaining + Int64(padding))
        remaining = 0
        padding = 0
        var paxPath: [UInt8]?
        var paxSize: Int64?
        var sparse = false
        var longName: [UInt8]?
        while true {
            guard try fill(atLeast: ArchiveReader.block) else {
                // A clean end between entries; not after a pax header or long name that describes the next one.
                guard start == end, paxPath == nil, paxSize == nil, longName == nil, !sparse else { throw truncated() }
                finished = true
                return nil
            }
            headerOffset = offset
            let header = unsafe UnsafeRawBufferPointer(rebasing: buffer[start..<(start + ArchiveReader.block)])
            if unsafe header.allSatisfy({ $0 == 0 }) {
                // End of archive: what follows (a second zero block, padding) is not read.
                finished = true
                return nil
            }
            guard unsafe TarHeader.checksumMatches(header) else { throw malformed("header checksum does not match") }
            // Sizes past 2^62 bytes are nonsense, and would overflow the block arithmetic below.
            guard let declared = unsafe TarHeader.number(header, at: 124, length: 12), declared <= ArchiveReader.maxSize else {
                throw malformed("unreadable or impossible size field")
            }
            let type = unsafe header[156]
            start += ArchiveReader.block
            offset += Int64(ArchiveReader.block)
            let dataBlocks = (declared + Int64(ArchiveReader.block - 1)) / Int64(ArchiveReader.block) * Int64(ArchiveReader.block)
            switch type {
            case UInt8(ascii: "x"):
                guard declared <= ArchiveReader.maxExtendedHeader else { throw malformed("pax header larger than 1 MiB") }
                let records = try take(Int(declared))
                try skip(dataBlocks - declared)
                guard let attributes = TarHeader.paxAttributes(records) else { throw malformed("unreadable pax header") }
                if let path = attributes.path { paxPath = path }
                if let size = attributes.size { paxSize = size }
                sparse = sparse || attributes.sparse
                continue
            case UInt8(ascii: "L"):
                guard declared <= ArchiveReader.maxLongName else { throw malformed("GNU long name longer than 64 KiB") }
                var name = try take(Int(declared))
                try skip(dataBlocks - declared)
                if let nul = name.firstIndex(of: 0) { name.removeSubrange(nul...) }
                longName = name
                continue
            case UInt8(ascii: "g"), UInt8(ascii: "K"):
                // Global pax attributes and GNU long link names: nothing this reader uses.
                try skip(dataBlocks)
                continue
            default:
                break
            }
            let nameBytes = unsafe paxPath ?? longName ?? TarHeader.name(header)
            let size = paxSize ?? declared
            guard size >= 0, size <= ArchiveReader.maxSize else { throw malformed("impossible size") }
            var kind = TarHeader.kind(type)
            if sparse { kind = .other("sparse file") }
            if kind == .regular, nameBytes.last == UInt8(ascii: "/") { kind = .directory }
            // Folders and links carry no data; everything else is followed by `size` bytes.
            if kind == .directory || kind == .symlink || kind == .hardlink {
                remaining = 0
                padding = 0
            } else {
                remaining = size
                padding = Int((Int64(ArchiveReader.block) - size % Int64(ArchiveReader.block)) % Int64(ArchiveReader.block))
            }
            let name = String(validating: nameBytes, as: UTF8.self)
            return ArchiveEntry(name: name, printableName: name ?? String(decoding: nameBytes, as: UTF8.self), kind: kind, size: size)
        }
    }

    /// The next piece of the current entry's data, where it was decoded (valid until the next call
    /// on this reader); empty at the entry's end.
    package func nextChunk(max limit: Int = .max) throws(ArchiveError) -> UnsafeRawBufferPointer {
        if remaining == 0 { return unsafe UnsafeRawBufferPointer(start: nil, count: 0) }
        if start == end {
            start = 0
            end = 0
            guard try fill(atLeast: 1) else { throw truncated() }
        }
        let n = Int(min(Int64(min(end - start, limit)), remaining))
        let chunk = unsafe UnsafeRawBufferPointer(rebasing: buffer[start..<(start + n)])
        start += n
        remaining -= Int64(n)
        offset += Int64(n)
        return unsafe chunk
    }

    /// The rest of the current entry's data; nil (and the entry left part-read) when it holds more
    /// than `limit` bytes.
    package func readRest(limit: Int) throws(ArchiveError) -> Data? {
        var data = Data()
        while true {
            let chunk = try unsafe nextChunk()
            if unsafe chunk.isEmpty { return data }
            guard data.count + chunk.count <= limit else { return nil }
            unsafe data.append(contentsOf: chunk)
        }
    }

    /// Feeds the rest of the current entry's data to `hasher`; the number of bytes fed.
    package func hashRest(with hasher: SHA256) throws(ArchiveError) -> Int64 {
        var size: Int64 = 0
        while true {
            let chunk = try unsafe nextChunk()
            if unsafe chunk.isEmpty { return size }
            unsafe hasher.update(chunk)
            size += Int64(chunk.count)
        }
    }

    /// Copies the current entry's next data into `buffer`; 0 at its end.
    package func readData(into output: UnsafeMutableRawBufferPointer) throws(ArchiveError) -> Int {
        let chunk = try unsafe nextChunk(max: output.count)
        if chunk.count > 0 { unsafe output.baseAddress!.copyMemory(from: chunk.baseAddress!, byteCount: chunk.count) }
        return chunk.count
    }
}
