import Foundation

/// A file mapped read-only (`mmap`; `manifest.json` for the image verifier), so a large file can
/// be read as a stream by a reader that wants contiguous bytes: the pages a reader has passed are handed back
/// (`madvise(MADV_DONTNEED)`), which keeps resident memory at a few MiB whatever the manifest's
/// size. Pages read again later fault back in from the page cache.
@safe package final class MappedFile {
    /// The whole file.
    package let bytes: UnsafeRawBufferPointer
    /// Pages below this offset have been handed back.
    private var released = 0
    /// File-backed pages can be handed back and read again; anonymous ones cannot.
    private var releasable = true
    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    /// Handing back in steps of this much keeps `madvise` calls rare.
    private static let step = 512 << 10

    /// Maps the regular file at `path` of 1 to `limit` bytes; nil for anything else (empty, too
    /// large, not a regular file, not mappable), which callers read the ordinary way to get the
    /// ordinary errors.
    package convenience init?(path: String, limit: Int) {
        guard let file = try? unsafe FileDescriptor.open(path, .readOnly, options: .followLinks) else { return nil }
        defer { try? file.close() }
        guard let info = try? file.status(), info.isRegular, info.size > 0, info.size <= limit else { return nil }
        self.init(file, count: Int(info.size))
    }

    private init?(_ file: FileDescriptor, count: Int) {
        guard let base = unsafe mmap(nil, count, PROT_READ, MAP_PRIVATE, file.rawValue, 0), unsafe base != MAP_FAILED else { return nil }
        unsafe bytes = UnsafeRawBufferPointer(start: base, count: count)
    }

    /// Copies a manifest that `read` gives piece by piece (0 at its end; a packed image's first
    /// entry) into an unlinked temporary file and maps that, so it too is read as a stream without
    /// being held in memory. Without a usable temporary file the bytes stay in memory. Nil when
    /// there are none.
    package static func copying(_ read: (UnsafeMutableRawBufferPointer) throws(ArchiveError) -> Int) throws(ArchiveError) -> MappedFile? {
        let file = try? FileDescriptor.unnamedTemporaryFile(in: NSTemporaryDirectory(), prefix: "mappack-manifest-")
        defer { try? file?.close() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { unsafe buffer.deallocate() }
        // nil while the temporary file takes the bytes.
        var memory: Data? = file != nil ? nil : Data()
        var count = 0
        while true {
            let n = try unsafe read(buffer)
            if n == 0 { break }
            if memory == nil, let file, unsafe (try? file.writeAll(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))) == nil {
                // The disk is full, say: take back what the file holds and go on in memory.
                var held = Data(count: count)
                // The bytes so far, read back from the file.
                let back = unsafe held.withUnsafeMutableBytes { unsafe (try? file.readAll(fromAbsoluteOffset: 0, into: $0)) != nil }
                memory = back ? held : nil
                guard memory != nil else { throw .malformed(unsafe "cannot keep the file: \(String(cString: strerror(errno)))") }
            }
            unsafe memory?.append(UnsafeRawBufferPointer(rebasing: buffer[0..<n]).bindMemory(to: UInt8.self))
            count += n
        }
        guard count > 0 else { return nil }
        if let memory { return MappedFile(copyOf: memory) }
        guard let file else { return nil }
        return MappedFile(file, count: count)
    }

    /// Anonymous memory holding `data`: its pages cannot be handed back (they would read as zeros).
    private init?(copyOf data: Data) {
        guard let base = unsafe mmap(nil, data.count, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), unsafe base != MAP_FAILED else {
            return nil
        }
        unsafe data.withUnsafeBytes { unsafe base.copyMemory(from: $0.baseAddress!, byteCount: data.count) }
        unsafe bytes = UnsafeRawBufferPointer(start: base, count: data.count)
        releasable = false
    }

    deinit { unsafe munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count) }

    /// Hands back the whole pages below `offset` once a step's worth has been passed.
    package func release(below offset: Int) {
        guard releasable, offset - released >= MappedFile.step else { return }
        let end = offset / MappedFile.pageSize * MappedFile.pageSize
        // A fault maps a whole large folio of the page cache (up to 2 MiB), which may reach back
        // below the last step's end: go over that part again.
        let start = max(0, released - (2 << 20))
        _ = unsafe madvise(UnsafeMutableRawPointer(mutating: bytes.baseAddress! + start), end - start, MADV_DONTNEED)
        released = end
    }

    /// Runs `body` with the mapped bytes as a span.
    package func withBytes<Result>(_ body: (RawSpan) -> Result) -> Result { unsafe body(bytes.bytes) }

    /// Hands back every page.
    package func releaseAll() {
        guard releasable else { return }
        _ = unsafe madvise(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count, MADV_DONTNEED)
        released = 0
    }

    /// The bytes as `Data` without a copy, for code that only reads them (the signature check):
    /// the pages are read-only, so nothing may mutate it. Valid while the mapping lives.
    package var readOnlyData: Data {
        unsafe Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes.baseAddress!), count: bytes.count, deallocator: .none)
    }
}
