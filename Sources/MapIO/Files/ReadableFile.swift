import Foundation

/// A file opened for reading, streamed through one reused buffer.
package final class ReadableFile {
    /// The path it was opened from.
    package let path: String
    let descriptor: FileDescriptor
    /// Size of one read.
    package static let chunkSize = 1 << 20

    /// Opens `path` read-only; with `followLinks` false, a symbolic link at `path` is refused
    /// (`O_NOFOLLOW`: files in caches and staging folders).
    package init(path: String, followLinks: Bool = true) throws(FileError) {
        self.path = path
        do { descriptor = try unsafe FileDescriptor.open(path, .readOnly, options: followLinks ? .followLinks : []) } catch {
            throw FileError(.open, path, code: error.code)
        }
    }

    private init(path: String, descriptor: FileDescriptor) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { try? descriptor.close() }

    /// The whole file at `path`, which must be a regular file (keys, given by name on a command line):
    /// a FIFO, a device or a folder is refused (`EINVAL`) without waiting, since the open does not block
    /// (`O_NONBLOCK`) and the kind is checked on the open descriptor (`fstat`).
    package static func regularFileContents(of path: String, limit: Int) throws(FileError) -> Data {
        let file: ReadableFile
        do {
            file = ReadableFile(path: path, descriptor: try unsafe FileDescriptor.open(path, .readOnly, options: [.followLinks, .nonBlocking]))
        } catch {
            throw FileError(.open, path, code: error.code)
        }
        let info: FileSystem.Status
        do { info = try file.descriptor.status() } catch { throw FileError(.fstat, path, code: error.code) }
        guard info.isRegular else {
            throw FileError(.read, note: "(not a regular file: a FIFO, device or folder is refused; give a key file)", path, code: EINVAL)
        }
        return try contents(of: file, limit: limit)
    }

    /// Reads up to `count` bytes into `buffer`; 0 at end of file.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(FileError) -> Int {
        do { return try unsafe descriptor.read(into: buffer) } catch { throw FileError(.read, path, code: error.code) }
    }

    /// Fills `bytes` from the front with up to `bytes.count` bytes at the file position (`read`,
    /// repeated on `EINTR`) and returns how many; 0 at the end of the file. For readers that pull
    /// one chunk at a time through an array they reuse (the streamed GeoJSON of `mappack import`).
    package func read(into bytes: inout [UInt8]) throws(FileError) -> Int {
        let result: Result<Int, FileError> = unsafe bytes.withUnsafeMutableBytes { raw in
            do throws(FileError) { return .success(try unsafe read(into: raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// The file's size now (`fstat`).
    package func size() throws(FileError) -> Int64 {
        do { return try descriptor.status().size } catch { throw FileError(.fstat, path, code: error.code) }
    }

    /// Exactly `count` bytes from `offset` (`pread`, repeated), leaving the file position alone; a
    /// file that ends before them is `EIO`. For formats read by offset (PMTiles sections and tiles).
    package func read(fromOffset offset: UInt64, count: Int) throws(FileError) -> Data {
        guard count > 0 else { return Data() }
        guard let start = Int64(exactly: offset) else { throw FileError(.pread, note: "(offset \(offset))", path, code: EINVAL) }
        do { return Data(try descriptor.readAll(fromAbsoluteOffset: start, count: count)) } catch {
            throw FileError(.pread, path, code: error.code)
        }
    }

    /// Calls `body` with each chunk of the file in order. The buffer is borrowed from
    /// `ScratchBuffers`: a fresh 1 MiB block per file is a mapping of its own (glibc's threshold is
    /// 128 KiB, `Allocator`), and a publish hashing 24k source files spent a third of its CPU time in
    /// the kernel faulting such blocks in and unmapping them (`perf`).
    package func forEachChunk(_ body: (UnsafeRawBufferPointer) throws -> Void) throws(FileError) {
        let buffer = unsafe ScratchBuffers.take(ReadableFile.chunkSize)
        defer { unsafe ScratchBuffers.give(buffer) }
        while true {
            let n = try unsafe read(into: buffer)
            if n == 0 { return }
            do { try unsafe body(UnsafeRawBufferPointer(rebasing: buffer[0..<n])) } catch let error as FileError { throw error } catch {
                throw FileError(.process, path, code: EIO)
            }
        }
    }

    /// The whole file, refusing files over `limit` bytes (manifests, catalogs, recipes); one
    /// allocation of the file's size when it is a regular file.
    package static func contents(of path: String, limit: Int, followLinks: Bool = true) throws(FileError) -> Data {
        try contents(of: try ReadableFile(path: path, followLinks: followLinks), limit: limit)
    }

    private static func contents(of file: ReadableFile, limit: Int) throws(FileError) -> Data {
        let path = file.path
        if let info = try? file.descriptor.status(), info.isRegular, info.size > 0 {
            let size = Int(info.size)
            if size > limit { throw FileError(.read, note: "(file larger than \(limit) bytes)", path, code: EFBIG) }
            var data = Data(count: size)
            let failure = unsafe data.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) -> FileError? in
                var filled = 0
                while filled < size {
                    do throws(FileError) {
                        let n = try unsafe file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[filled...]))
                        if n == 0 { break }
                        filled += n
                    } catch { return error }
                }
                return filled == size ? nil : FileError(.read, note: "(file changed size while read)", path, code: EIO)
            }
            if let failure { throw failure }
            return data
        }
        var data = Data()
        try unsafe file.forEachChunk { chunk in
            if data.count + chunk.count > limit { throw FileError(.read, note: "(file larger than \(limit) bytes)", path, code: EFBIG) }
            unsafe data.append(contentsOf: chunk)
        }
        return data
    }
}
