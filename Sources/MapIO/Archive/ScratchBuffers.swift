import Foundation
import Synchronization

/// Large I/O buffers kept for reuse. A bundle is opened, decoded and closed in a moment; fresh
/// buffers of a few hundred KiB each time cost the allocator more than the bundle's headers do
/// (each one makes glibc consolidate its free lists), so archive readers borrow them here.
enum ScratchBuffers {
    private struct Buffer: @unchecked Sendable { let pointer: UnsafeMutableRawBufferPointer }
    /// At most this many idle buffers are kept (per size they come in).
    private static let keep = 8
    private static let idle = Mutex<[Buffer]>([])

    /// A buffer of exactly `size` bytes, reused when one is idle.
    static func take(_ size: Int) -> UnsafeMutableRawBufferPointer {
        let reused = idle.withLock { list -> UnsafeMutableRawBufferPointer? in
            guard let index = list.lastIndex(where: { $0.pointer.count == size }) else { return nil }
            return list.remove(at: index).pointer
        }
        return reused ?? .allocate(byteCount: size, alignment: 64)
    }

    /// Returns a buffer from `take` for reuse (or frees it when enough are idle).
    static func give(_ buffer: UnsafeMutableRawBufferPointer) {
        let kept = idle.withLock { list -> Bool in
            guard list.count(where: { $0.pointer.count == buffer.count }) < keep else { return false }
            list.append(Buffer(pointer: buffer))
            return true
        }
        if !kept { buffer.deallocate() }
    }
}
