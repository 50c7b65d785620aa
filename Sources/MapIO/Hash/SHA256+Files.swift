import Foundation
import MapFormat

/// Hashing files: a file's digest, a copy hashed on the way, and the one-open check of a store file.
extension SHA256 {
    /// SHA-256 and size of the regular file at `path`, streamed through one borrowed buffer
    /// (`ScratchBuffers`, as `ReadableFile.forEachChunk`: publish hashes every bundle it packs).
    package static func digestOfFile(_ path: String) throws(FileError) -> (digest: SHA256Digest, size: Int64) {
        let buffer = unsafe ScratchBuffers.take(ReadableFile.chunkSize)
        defer { unsafe ScratchBuffers.give(buffer) }
        switch unsafe try checkFile(path, hash: true, buffer: buffer) {
        case .regular(let size, let digest?): return (digest, size)
        case .regular, .notRegular: throw FileError(.open, note: "(not a regular file)", path, code: EINVAL)
        case .missing: throw FileError(.open, path, code: ENOENT)
        }
    }

    /// Hashes up to `count` bytes of `path` from `offset`, copying them to a new file `target` (which
    /// must not exist; fsynced) when given; returns their SHA-256 and how many bytes there were,
    /// fewer than `count` when the file ends first (the caller decides what that means).
    package static func copyRange(of path: String, from offset: Int64, count: Int64, to target: String?) throws(FileError) -> (
        digest: SHA256Digest, size: Int64
    ) {
        let input: FileDescriptor
        do { input = try unsafe FileDescriptor.open(path, .readOnly) } catch { throw FileError(.open, path, code: error.code) }
        defer { try? input.close() }
        let output = try target.map { path throws(FileError) in try WritableFile(path: path, exclusive: true) }
        let buffer = unsafe ScratchBuffers.take(ReadableFile.chunkSize)
        defer { unsafe ScratchBuffers.give(buffer) }
        let hasher = SHA256()
        var done: Int64 = 0
        while done < count {
            let want = Int(min(Int64(buffer.count), count - done))
            let got: Int
            do {
                got = try unsafe input.read(fromAbsoluteOffset: offset + done, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]))
            } catch {
                throw FileError(.read, path, code: error.code)
            }
            if got == 0 { break }
            let bytes = unsafe UnsafeRawBufferPointer(rebasing: buffer[0..<got])
            unsafe hasher.update(bytes)
            try unsafe output?.write(bytes)
            done += Int64(got)
        }
        try output?.close(sync: true)
        return (hasher.finalize(), done)
    }

    /// Feeds the bytes of the file at `path` (a link is refused) to this digest, streamed; returns how
    /// many there were.
    package func update(fileAt path: String) throws(FileError) -> Int64 {
        let input = try ReadableFile(path: path, followLinks: false)
        var size: Int64 = 0
        try unsafe input.forEachChunk { chunk in
            unsafe update(chunk)
            size += Int64(chunk.count)
        }
        return size
    }

    /// Copies the file at `source` to a new file `target` (which must not exist), hashing the
    /// bytes on the way; returns the copy's SHA-256 and size. A link at `source` is refused:
    /// store files (of a shard, of an old image) are regular files, and a planted link would copy
    /// any file the process can read into the new image.
    package static func copyFile(_ source: String, to target: String) throws(FileError) -> (digest: SHA256Digest, size: Int64) {
        let input = try ReadableFile(path: source, followLinks: false)
        let output = try WritableFile(path: target, exclusive: true)
        let hasher = SHA256()
        var size: Int64 = 0
        try unsafe input.forEachChunk { chunk in
            unsafe hasher.update(chunk)
            size += Int64(chunk.count)
            try unsafe output.write(chunk)
        }
        try output.close(sync: false)
        return (hasher.finalize(), size)
    }

    /// What `checkFile` found.
    package enum FileCheck: Sendable, Equatable {
        case missing
        case notRegular
        case regular(size: Int64, digest: SHA256Digest?)
    }

    /// Opens `path` without following a link, checks it is a regular file (`fstat`), and hashes
    /// it when `hash`: one open per file, no separate stat pass.
    package static func checkFile(_ path: String, hash: Bool, buffer: UnsafeMutableRawBufferPointer) throws(FileError) -> FileCheck {
        let file: FileDescriptor
        do { file = try unsafe FileDescriptor.open(path, .readOnly, options: .nonBlocking) } catch {
            if error.code == ENOENT || error.code == ENOTDIR { return .missing }
            if error.code == ELOOP { return .notRegular }
            throw FileError(.open, path, code: error.code)
        }
        defer { try? file.close() }
        let info: FileSystem.Status
        do { info = try file.status() } catch { throw FileError(.fstat, path, code: error.code) }
        guard info.isRegular else { return .notRegular }
        guard hash else { return .regular(size: info.size, digest: nil) }
        let hasher = SHA256()
        var size: Int64 = 0
        while true {
            let n: Int
            do { n = try unsafe file.read(into: buffer) } catch { throw FileError(.read, path, code: error.code) }
            if n == 0 { break }
            unsafe hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            size += Int64(n)
        }
        return .regular(size: size, digest: hasher.finalize())
    }
}
