import Foundation

/// `manifest.json` mapped read-only (`mmap`), so a large manifest can be read as a stream by a
/// reader that wants contiguous bytes: the pages a reader has passed are handed back
/// (`madvise(MADV_DONTNEED)`), which keeps resident memory at a few MiB whatever the manifest's
/// size. Pages read again later fault back in from the page cache.
final class ManifestMapping {
    /// The whole file.
    let bytes: UnsafeRawBufferPointer
    /// Pages below this offset have been handed back.
    private var released = 0
    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    /// Handing back in steps of this much keeps `madvise` calls rare.
    private static let step = 512 << 10

    /// Maps the regular file at `path` of 1 to `limit` bytes; nil for anything else (empty, too
    /// large, not a regular file, not mappable), which callers read the ordinary way to get the
    /// ordinary errors.
    init?(path: String, limit: Int) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size > 0, info.st_size <= limit else { return nil }
        let count = Int(info.st_size)
        guard let base = mmap(nil, count, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else { return nil }
        bytes = UnsafeRawBufferPointer(start: base, count: count)
    }

    deinit { munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count) }

    /// Hands back the whole pages below `offset` once a step's worth has been passed.
    func release(below offset: Int) {
        guard offset - released >= ManifestMapping.step else { return }
        let end = offset / ManifestMapping.pageSize * ManifestMapping.pageSize
        // A fault maps a whole large folio of the page cache (up to 2 MiB), which may reach back
        // below the last step's end: go over that part again.
        let start = max(0, released - (2 << 20))
        _ = madvise(UnsafeMutableRawPointer(mutating: bytes.baseAddress! + start), end - start, MADV_DONTNEED)
        released = end
    }

    /// Hands back every page.
    func releaseAll() {
        _ = madvise(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count, MADV_DONTNEED)
        released = 0
    }

    /// The bytes as `Data` without a copy, for code that only reads them (the signature check):
    /// the pages are read-only, so nothing may mutate it. Valid while the mapping lives.
    var readOnlyData: Data { Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes.baseAddress!), count: bytes.count, deallocator: .none) }
}
