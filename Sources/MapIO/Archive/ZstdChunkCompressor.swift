import CCrypto
import CZstd

/// A zchunk chunk's digest: SHA-512 cut to its first 16 bytes (zchunk's "SHA-512/128").
package struct ChunkDigest: Hashable, Sendable {
    package let high: UInt64
    package let low: UInt64

    package init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// From 32 hex digits (as libzck prints a chunk's digest); nil for anything else.
    package init?(hex: some StringProtocol) {
        let digits = Array(hex.utf8)
        guard digits.count == 32 else { return nil }
        var words: [UInt64] = [0, 0]
        for (index, digit) in digits.enumerated() {
            let value: UInt8
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = digit - UInt8(ascii: "A") + 10
            default: return nil
            }
            words[index / 16] = words[index / 16] << 4 | UInt64(value)
        }
        self.init(high: words[0], low: words[1])
    }
}

/// Compresses pieces one zstd frame each, byte for byte as libzck 1.2 compresses a zchunk chunk:
/// `ZSTD_compress2` at the level with the `ZSTD_btopt` strategy, which libzck sets whatever the
/// level so that its output is the same on every architecture (checked: every chunk of a published
/// bundle). A device compresses its old files' pieces with it to find the chunks a new bundle
/// shares with them (issue 21) without writing a `.zck` through libzck.
@safe package final class ZstdChunkCompressor {
    private let context: OpaquePointer
    private let digest: OpaquePointer
    private var frame: [UInt8] = []
    /// SHA-512, fetched once (`EVP_MD_fetch`), as `SHA256` does (and `nonisolated(unsafe)` as there:
    /// an `EVP_MD` that never changes, shared between threads).
    private nonisolated(unsafe) static let sha512: OpaquePointer = unsafe EVP_MD_fetch(nil, "SHA512", nil) ?? EVP_sha512()

    /// A compressor at zstd `level` (1–19; the catalog's reader has checked it).
    package init(level: Int32) throws(ArchiveError) {
        guard let context = unsafe ZSTD_createCCtx() else { throw .zstd("out of memory") }
        guard let digest = unsafe EVP_MD_CTX_new() else {
            unsafe ZSTD_freeCCtx(context)
            throw .zstd("out of memory")
        }
        unsafe self.context = context
        unsafe self.digest = digest
        try unsafe check(ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level))
        try unsafe check(ZSTD_CCtx_setParameter(context, ZSTD_c_strategy, Int32(ZSTD_btopt.rawValue)))
    }

    deinit {
        unsafe ZSTD_freeCCtx(context)
        unsafe EVP_MD_CTX_free(digest)
    }

    private func check(_ code: Int) throws(ArchiveError) {
        guard ZSTD_isError(code) != 0 else { return }
        throw unsafe .zstd(String(cString: ZSTD_getErrorName(code)))
    }

    /// Compresses `bytes` into one frame and calls `body` with the frame and its digest (the frame's
    /// memory is reused by the next call).
    package func compress<T>(_ bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer, ChunkDigest) throws -> T) throws -> T {
        let bound = ZSTD_compressBound(bytes.count)
        if frame.count < bound { frame = [UInt8](repeating: 0, count: bound) }
        return try unsafe frame.withUnsafeMutableBytes { out in
            let written = unsafe ZSTD_compress2(context, out.baseAddress, out.count, bytes.baseAddress, bytes.count)
            try check(written)
            let compressed = unsafe UnsafeRawBufferPointer(rebasing: out[0..<written])
            var full = [UInt8](repeating: 0, count: 64)
            var length: UInt32 = 0
            unsafe EVP_DigestInit_ex2(digest, Self.sha512, nil)
            unsafe EVP_DigestUpdate(digest, compressed.baseAddress, compressed.count)
            _ = unsafe EVP_DigestFinal_ex(digest, &full, &length)
            var high: UInt64 = 0
            var low: UInt64 = 0
            for index in 0..<8 {
                high = high << 8 | UInt64(full[index])
                low = low << 8 | UInt64(full[index + 8])
            }
            return try unsafe body(compressed, ChunkDigest(high: high, low: low))
        }
    }
}
