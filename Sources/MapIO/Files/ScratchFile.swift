import Foundation

/// Scratch space for what is too large to hold in memory: an unnamed temporary file in
/// `NSTemporaryDirectory()` (`FileDescriptor.unnamedTemporaryFile`), gone with its descriptor
/// whatever happens to the process, written and read back as fixed-width values (`UInt64`,
/// `Double`) at value offsets with `pwrite`/`pread`. Reads and writes at distinct offsets may come
/// from any thread.
package final class ScratchFile: Sendable {
    private let descriptor: FileDescriptor

    /// A new, empty scratch file; `prefix` starts its (unlinked) name.
    package init(prefix: String) throws(FileError) {
        do { descriptor = try FileDescriptor.unnamedTemporaryFile(in: NSTemporaryDirectory(), prefix: prefix) } catch {
            throw FileError(.mkstemp, NSTemporaryDirectory() + "/" + prefix + "XXXXXX", code: error.code)
        }
    }

    deinit { try? descriptor.close() }

    /// What failures name as the file.
    private static let shown = "scratch file in " + NSTemporaryDirectory()

    /// Writes `values` at value offset `offset` (a value being `Value`'s size).
    package func write<Value: BitwiseCopyable>(_ values: ArraySlice<Value>, at offset: Int) throws(FileError) {
        let failure: Errno? = unsafe values.withUnsafeBytes { bytes in
            do { try unsafe descriptor.writeAll(toAbsoluteOffset: Int64(offset * MemoryLayout<Value>.stride), bytes) } catch {
                return error as? Errno ?? Errno(EIO)
            }
            return nil
        }
        if let failure { throw FileError(.pwrite, ScratchFile.shown, code: failure.code) }
    }

    /// Writes `values` at value offset `offset`.
    package func write<Value: BitwiseCopyable>(_ values: [Value], at offset: Int) throws(FileError) { try write(values[...], at: offset) }

    /// Replaces `values` with the `count` values at value offset `offset`, which were written before.
    package func read<Value: BitwiseCopyable>(into values: inout [Value], at offset: Int, count: Int) throws(FileError) {
        var failure: Errno?
        let stride = MemoryLayout<Value>.stride
        values = unsafe [Value](unsafeUninitializedCapacity: count) { buffer, initialized in
            do {
                try unsafe descriptor.readAll(fromAbsoluteOffset: Int64(offset * stride), into: UnsafeMutableRawBufferPointer(buffer))
                initialized = count
            } catch {
                failure = error as? Errno ?? Errno(EIO)
                initialized = 0
            }
        }
        if let failure { throw FileError(.pread, ScratchFile.shown, code: failure.code) }
    }
}
