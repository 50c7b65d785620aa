import Foundation

/// Large I/O buffers kept for reuse. A bundle is opened, decoded and closed in a moment; fresh
/// buffers of a few hundred KiB each time cost the allocator more than the bundle's headers do
/// (each one makes glibc consolidate its free lists), so archive readers borrow them here.
enum ScratchBuffers {
    /// At most this many idle buffers are kept (per size they come in).
    private static let idle = unsafe IdlePool<UnsafeMutableRawBufferPointer>(keeping: 8)

    /// A buffer of exactly `size` bytes, reused when one is idle.
    static func take(_ size: Int) -> UnsafeMutableRawBufferPointer {
        unsafe idle.take { $0.count == size } ?? .allocate(byteCount: size, alignment: 64)
    }

    /// Returns a buffer from `take` for reuse (or frees it when enough are idle).
    static func give(_ buffer: UnsafeMutableRawBufferPointer) {
        if unsafe !idle.keep(buffer, sameKind: { $0.count == buffer.count }) { unsafe buffer.deallocate() }
    }
}
