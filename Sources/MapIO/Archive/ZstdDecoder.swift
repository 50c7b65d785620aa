import CZstd
import Foundation
import MapFormat
import Synchronization

/// A streaming zstd decompressor over a file (`ZSTD_decompressStream`) with a capped window.
@safe package final class ZstdDecoder {
    private let context: OpaquePointer
    private let file: ReadableFile
    private let input: UnsafeMutableRawBufferPointer
    private var inputFilled = 0
    private var inputPosition = 0
    private var sourceDone = false
    private let windowLogMax: Int32
    /// SHA-256 of every compressed byte read from the file, when asked for.
    private let hasher: SHA256?
    private var digest: SHA256Digest?
    /// Compressed bytes consumed so far.
    package private(set) var compressedBytesRead: Int64 = 0

    /// Opens `path` for decompression, refusing frames with windows over `2^windowLogMax`; with
    /// `hashing`, the file's bytes are hashed as they are read (see `finishDigest`).
    package init(path: String, windowLogMax: Int32, hashing: Bool = false) throws(ArchiveError) {
        hasher = hashing ? SHA256() : nil
        do { file = try ReadableFile(path: path) } catch { throw .io(error) }
        unsafe context = ZstdDecoder.contexts.take()
        self.windowLogMax = windowLogMax
        unsafe ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, windowLogMax)
        unsafe input = ScratchBuffers.take(Int(ZSTD_DStreamInSize()))
    }

    deinit {
        unsafe ZstdDecoder.contexts.give(context)
        unsafe ScratchBuffers.give(input)
    }

    /// Decompression contexts for reuse: creating one costs more than decoding a small bundle.
    private static let contexts = ContextPool()

    /// Frees the contexts kept for reuse (their windows), e.g. once a batch of archives is done.
    package static func releasePooledContexts() { contexts.drain() }

    @safe private final class ContextPool: Sendable {
        private let idle = unsafe IdlePool<OpaquePointer>(keeping: 4)

        func take() -> OpaquePointer { unsafe idle.take() ?? ZSTD_createDCtx() }

        func drain() {
            // `forEach`, not a `for unsafe … in` loop: swift-format 6.3.1 drops the space after that `unsafe` (swift-format#1183).
            // swift-format-ignore: ReplaceForEachWithForLoop
            unsafe idle.removeAll().forEach { unsafe ZSTD_freeDCtx($0) }
        }

        func give(_ context: OpaquePointer) {
            // Back to a fresh state: parameters (the window cap) are set again by the next user.
            unsafe ZSTD_DCtx_reset(context, ZSTD_reset_session_and_parameters)
            // A context that decoded a large window keeps that buffer: not worth holding on to.
            guard unsafe ZSTD_sizeof_DCtx(context) <= 4 << 20, unsafe idle.keep(context) else {
                unsafe ZSTD_freeDCtx(context)
                return
            }
        }
    }

    /// Fills `output` with decompressed bytes; 0 at the end of the stream.
    package func read(into output: UnsafeMutableRawBufferPointer) throws(ArchiveError) -> Int {
        var outBuffer = unsafe ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
        while unsafe outBuffer.pos == 0 {
            if inputPosition == inputFilled && !sourceDone {
                do { inputFilled = try unsafe file.read(into: input) } catch { throw .io(error) }
                unsafe hasher?.update(UnsafeRawBufferPointer(rebasing: input[0..<inputFilled]))
                inputPosition = 0
                compressedBytesRead += Int64(inputFilled)
                if inputFilled == 0 { sourceDone = true }
            }
            if sourceDone && inputPosition == inputFilled {
                // Drain what the decoder still holds; a frame cut short is an error.
                var empty = unsafe ZSTD_inBuffer(src: input.baseAddress, size: 0, pos: 0)
                let hint = unsafe ZSTD_decompressStream(context, &outBuffer, &empty)
                try check(hint)
                if unsafe outBuffer.pos == 0 {
                    if hint != 0 { throw .zstd("stream ends in the middle of a frame (truncated file)") }
                    return 0
                }
                break
            }
            var inBuffer = unsafe ZSTD_inBuffer(src: input.baseAddress, size: inputFilled, pos: inputPosition)
            let hint = unsafe ZSTD_decompressStream(context, &outBuffer, &inBuffer)
            inputPosition = unsafe inBuffer.pos
            try check(hint)
        }
        return unsafe outBuffer.pos
    }

    /// Reads (without decoding) and hashes whatever the decoder has not read of the file yet, and
    /// returns the SHA-256 of the whole file; nil when not hashing. Later calls give the same value.
    package func finishDigest() throws(ArchiveError) -> SHA256Digest? {
        guard let hasher else { return nil }
        if let digest { return digest }
        while !sourceDone {
            do { inputFilled = try unsafe file.read(into: input) } catch { throw .io(error) }
            inputPosition = inputFilled
            compressedBytesRead += Int64(inputFilled)
            if inputFilled == 0 { sourceDone = true }
            unsafe hasher.update(UnsafeRawBufferPointer(rebasing: input[0..<inputFilled]))
        }
        digest = hasher.finalize()
        return digest
    }

    private func check(_ code: Int) throws(ArchiveError) {
        guard ZSTD_isError(code) != 0 else { return }
        if ZSTD_getErrorCode(code) == ZSTD_error_frameParameter_windowTooLarge { throw .windowTooLarge(limitLog: windowLogMax) }
        throw unsafe .zstd(String(cString: ZSTD_getErrorName(code)))
    }
}

/// One-shot zstd compression (`ZSTD_compress`), for small inputs such as fuzzing's raw tar streams.
package enum Zstd {
    /// The zstd frame magic number's bytes, as they start a compressed file.
    package static let magic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]

    /// `data` compressed at `level` into one frame.
    package static func compress(_ data: Data, level: Int32 = 1) -> Data {
        var out = Data(count: ZSTD_compressBound(data.count))
        let written = unsafe out.withUnsafeMutableBytes { target in
            unsafe data.withUnsafeBytes { source in
                unsafe ZSTD_compress(target.baseAddress, target.count, source.baseAddress, source.count, level)
            }
        }
        precondition(ZSTD_isError(written) == 0, "ZSTD_compress failed on a bound-sized buffer")
        return out.prefix(written)
    }

    /// `data` (one or more whole zstd frames) decompressed, refusing more than `limit` output bytes, a
    /// window over `2^windowLogMax` or a truncated frame (`ZSTD_decompressStream`). The cap is what
    /// stops a decompression bomb: a small download that would expand to gigabytes is cut at `limit`.
    package static func decompress(_ data: Data, limit: Int, windowLogMax: Int32 = 27) throws(ArchiveError) -> Data {
        guard let context = unsafe ZSTD_createDCtx() else { throw .zstd("out of memory") }
        defer { unsafe ZSTD_freeDCtx(context) }
        unsafe ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, windowLogMax)
        var output = Data()
        let step = Int(ZSTD_DStreamOutSize())
        var chunk = [UInt8](repeating: 0, count: step)
        var hint = 0
        var failure: ArchiveError?
        unsafe data.withUnsafeBytes { source in
            var input = unsafe ZSTD_inBuffer(src: source.baseAddress, size: source.count, pos: 0)
            repeat {
                let produced = unsafe chunk.withUnsafeMutableBytes { target -> Int in
                    var out = unsafe ZSTD_outBuffer(dst: target.baseAddress, size: target.count, pos: 0)
                    hint = unsafe ZSTD_decompressStream(context, &out, &input)
                    return unsafe out.pos
                }
                if ZSTD_isError(hint) != 0 {
                    failure =
                        unsafe ZSTD_getErrorCode(hint) == ZSTD_error_frameParameter_windowTooLarge
                        ? .windowTooLarge(limitLog: windowLogMax) : .zstd(String(cString: ZSTD_getErrorName(hint)))
                    return
                }
                guard output.count + produced <= limit else {
                    failure = .tooLarge(entry: "decompressed data", limit: Int64(limit))
                    return
                }
                output.append(contentsOf: chunk[0..<produced])
                // 0: a frame ended and is flushed; with all input read, so is the stream.
                if unsafe input.pos == input.size && (hint == 0 || produced == 0) { break }
            } while true
        }
        if let failure { throw failure }
        if hint != 0 { throw .zstd("stream ends in the middle of a frame (truncated data)") }
        return output
    }
}

extension Zstd {
    /// Whether the file at `path` starts with the zstd magic number (as every `.tar.zst` does):
    /// a recipe or any other file given where an image goes is then "not an image", not a
    /// decoder error.
    package static func startsWithMagic(_ path: String) -> Bool {
        guard let file = try? unsafe FileDescriptor.open(path, .readOnly, options: .followLinks) else { return false }
        defer { try? file.close() }
        var head = [UInt8](repeating: 0, count: magic.count)
        let count = unsafe head.withUnsafeMutableBytes { unsafe (try? file.read(into: $0)) ?? 0 }
        return count == magic.count && head == magic
    }

    /// The linked libzstd's version (`ZSTD_versionString`).
    package static var libraryVersion: String { unsafe "zstd " + String(cString: ZSTD_versionString()) }
}
