import CZstd

/// One zstd frame at a time through a compression context (`ZSTD_CCtx`) reused from frame to frame:
/// a context is taken from a pool for an archive and given back after it, so a publish's threads each
/// keep one instead of allocating several MiB of workspace per bundle. A frame is what
/// `ZSTD_initCStream(level)` + `ZSTD_compressStream` + `ZSTD_endStream` make (libarchive's zstd
/// filter): the content size is not pledged, and input split anyhow gives the same bytes.
@safe package final class ZstdCompressor {
    private let context: OpaquePointer
    /// The level the next frame is compressed at.
    private var level: Int32 = 0

    /// The output buffer size zstd recommends (`ZSTD_CStreamOutSize`).
    package static let outputSize = ZSTD_CStreamOutSize()

    private init?() {
        guard let context = unsafe ZSTD_createCCtx() else { return nil }
        unsafe self.context = context
    }

    deinit { unsafe ZSTD_freeCCtx(context) }

    /// Contexts idle between archives: as many as threads compressed at once, at most 16 (a publish
    /// runs one packer per core).
    private static let idle = IdlePool<ZstdCompressor>(keeping: 16)

    /// A compressor for a new frame at `level`, reused when one is idle.
    package static func take(level: Int32) -> ZstdCompressor {
        guard let compressor = idle.take() ?? ZstdCompressor() else { fatalError("ZSTD_createCCtx: out of memory") }
        // A fresh frame with fresh parameters, then the level: what `ZSTD_initCStream` does.
        unsafe ZSTD_CCtx_reset(compressor.context, ZSTD_reset_session_and_parameters)
        compressor.level = level
        unsafe ZSTD_CCtx_setParameter(compressor.context, ZSTD_c_compressionLevel, level)
        return compressor
    }

    /// Hands `compressor` back for the next archive (or frees it when enough are idle).
    package static func give(_ compressor: ZstdCompressor) {
        _ = idle.keep(compressor)
    }

    /// Compresses `input` (`ZSTD_e_continue`), or with `ending` ends the frame (`ZSTD_e_end`; give no
    /// input then), handing each full `out` buffer, and with `ending` the last one, to `write`.
    package func compress(
        _ input: UnsafeRawBufferPointer, ending: Bool, into out: UnsafeMutableRawBufferPointer,
        write: (UnsafeRawBufferPointer) throws(ArchiveError) -> Void
    ) throws(ArchiveError) {
        var source = unsafe ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        var target = unsafe ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: 0)
        while true {
            let left = unsafe ZSTD_compressStream2(context, &target, &source, ending ? ZSTD_e_end : ZSTD_e_continue)
            if ZSTD_isError(left) != 0 { throw unsafe .zstd(String(cString: ZSTD_getErrorName(left))) }
            let done = unsafe ending ? left == 0 : source.pos == source.size
            if unsafe target.pos == target.size || (done && target.pos > 0) {
                try unsafe write(UnsafeRawBufferPointer(rebasing: out[0..<target.pos]))
                unsafe target.pos = 0
            }
            if done { return }
        }
    }
}
