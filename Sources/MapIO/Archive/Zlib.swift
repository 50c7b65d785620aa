import CZlib
import Foundation

/// Why a gzip or zlib stream could not be inflated or deflated.
package struct ZlibError: Error, Equatable, Sendable, CustomStringConvertible {
    /// zlib's message, or what mappack refused.
    package let reason: String

    package var description: String { reason }
}

/// gzip and zlib streams, through zlib: vector tiles as map sources ship them (gzip) and as MapLibre
/// Native's offline database keeps them (zlib, `compressed = 1`). Whole buffers only: a tile is small.
package enum Zlib {
    /// How a buffer is wrapped, by its first bytes.
    package enum Wrapping: Equatable, Sendable {
        /// RFC 1952: `1f 8b`.
        case gzip
        /// RFC 1950: a CMF byte with method 8 and a header checksum divisible by 31.
        case zlib
        /// Anything else (raw MVT, PNG, …).
        case none
    }

    /// The wrapping of `data`.
    package static func wrapping(of data: Data) -> Wrapping {
        guard data.count >= 2 else { return .none }
        let first = data[data.startIndex]
        let second = data[data.startIndex + 1]
        if first == 0x1F, second == 0x8B { return .gzip }
        if first & 0x0F == 8, first >> 4 <= 7, (UInt16(first) << 8 | UInt16(second)) % 31 == 0 { return .zlib }
        return .none
    }

    /// The bytes inside a gzip or zlib stream (`inflateInit2` with header detection); refused past
    /// `limit` bytes out (a decompression bomb) or when the stream is damaged or truncated.
    package static func inflate(_ data: Data, limit: Int) throws(ZlibError) -> Data {
        var stream = unsafe z_stream()
        guard unsafe mappack_inflate_init(&stream) == Z_OK else { throw ZlibError(reason: "inflateInit2 failed") }
        defer { unsafe inflateEnd(&stream) }
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var input = data
        let status: Int32 = unsafe input.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) -> Int32 in
            unsafe stream.next_in = raw.baseAddress?.assumingMemoryBound(to: Bytef.self)
            unsafe stream.avail_in = uInt(raw.count)
            while true {
                let result = unsafe chunk.withUnsafeMutableBufferPointer { buffer -> Int32 in
                    unsafe stream.next_out = buffer.baseAddress
                    unsafe stream.avail_out = uInt(buffer.count)
                    let result = unsafe CZlib.inflate(&stream, Z_NO_FLUSH)
                    unsafe output.append(buffer.baseAddress!, count: buffer.count - Int(stream.avail_out))
                    return result
                }
                if output.count > limit { return Z_BUF_ERROR - 100 }
                if result == Z_STREAM_END { return Z_OK }
                if result != Z_OK { return result }
                if unsafe stream.avail_in == 0, unsafe stream.avail_out != 0 { return Z_DATA_ERROR - 100 }
            }
        }
        switch status {
        case Z_OK: return output
        case Z_BUF_ERROR - 100: throw ZlibError(reason: "inflates to more than \(limit) bytes")
        case Z_DATA_ERROR - 100: throw ZlibError(reason: "the stream is truncated")
        default: throw ZlibError(reason: unsafe "damaged stream (zlib \(status): \(stream.msg.map { unsafe String(cString: $0) } ?? "no message"))")
        }
    }

    /// `data` as a zlib stream (RFC 1950) at `level` (`deflateInit`); the same bytes for the same input.
    package static func deflate(_ data: Data, level: Int32 = 6) throws(ZlibError) -> Data {
        try deflate(data, wrapping: .zlib, level: level)
    }

    /// `data` as a gzip stream (RFC 1952) at `level` (`deflateInit2`, 15 + 16 window bits): no file
    /// name, modification time 0, so the same bytes for the same input (PMTiles directories, tiles).
    package static func gzip(_ data: Data, level: Int32 = 6) throws(ZlibError) -> Data {
        try deflate(data, wrapping: .gzip, level: level)
    }

    /// `data` deflated inside the `wrapping` header and trailer (`deflate` with `Z_FINISH` into a
    /// buffer of `deflateBound` bytes, so one call does it).
    private static func deflate(_ data: Data, wrapping: Wrapping, level: Int32) throws(ZlibError) -> Data {
        var stream = unsafe z_stream()
        let initialised = unsafe wrapping == .gzip ? mappack_gzip_deflate_init(&stream, level) : mappack_deflate_init(&stream, level)
        guard initialised == Z_OK else { throw ZlibError(reason: wrapping == .gzip ? "deflateInit2 failed" : "deflateInit failed") }
        defer { unsafe deflateEnd(&stream) }
        var input = data
        var output = unsafe [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(data.count))))
        let status = unsafe input.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) -> Int32 in
            unsafe output.withUnsafeMutableBufferPointer { buffer -> Int32 in
                unsafe stream.next_in = raw.baseAddress?.assumingMemoryBound(to: Bytef.self)
                unsafe stream.avail_in = uInt(raw.count)
                unsafe stream.next_out = buffer.baseAddress
                unsafe stream.avail_out = uInt(buffer.count)
                return unsafe CZlib.deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { throw ZlibError(reason: "deflate failed (zlib \(status))") }
        return unsafe Data(output.prefix(Int(stream.total_out)))
    }
}
