import CCrypto
import Foundation

/// Streaming SHA-256 over libcrypto's EVP interface (`EVP_DigestInit_ex2`, `EVP_DigestUpdate`, `EVP_DigestFinal_ex`).
package final class SHA256 {
    private let context: OpaquePointer

    /// The algorithm, fetched from the default provider once (`EVP_MD_fetch`): initialising with
    /// `EVP_sha256()` fetches it again on every digest, which costs more than hashing a small file.
    private nonisolated(unsafe) static let algorithm: OpaquePointer = EVP_MD_fetch(nil, "SHA256", nil) ?? EVP_sha256()

    /// Starts a new digest.
    package init() {
        context = EVP_MD_CTX_new()
        EVP_DigestInit_ex2(context, SHA256.algorithm, nil)
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Starts over for a new digest in the same context (no allocation), after a `finalize`.
    package func reset() {
        EVP_DigestInit_ex2(context, SHA256.algorithm, nil)
    }

    /// Feeds bytes.
    package func update(_ bytes: UnsafeRawBufferPointer) {
        if bytes.count > 0 { EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) }
    }

    /// Feeds bytes.
    package func update(_ data: Data) { data.withUnsafeBytes { update($0) } }

    /// The lower-case hex digest; call once (or once after each `reset`).
    package func finalizeHex() -> String { finalize().hex }

    /// The digest; call once (or once after each `reset`).
    package func finalize() -> Digest {
        var out = Digest()
        var length: UInt32 = 0
        withUnsafeMutableBytes(of: &out.bytes) { raw in
            _ = EVP_DigestFinal_ex(context, raw.baseAddress!.assumingMemoryBound(to: UInt8.self), &length)
        }
        return out
    }

    /// Hex SHA-256 of `data`.
    package static func hex(_ data: Data) -> String {
        let hasher = SHA256()
        hasher.update(data)
        return hasher.finalizeHex()
    }

    /// Hex SHA-256 and size of the regular file at `path`, streamed through one buffer.
    package static func hexOfFile(_ path: String) throws(FileError) -> (hex: String, size: Int64) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ReadableFile.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        switch try checkFile(path, hash: true, buffer: buffer) {
        case .regular(let size, let hex?): return (hex, size)
        case .regular, .notRegular: throw FileError("open (not a regular file)", path, code: EINVAL)
        case .missing: throw FileError("open", path, code: ENOENT)
        }
    }
}

/// Lower-case hex encoding.
package enum Hex {
    /// Hex of `bytes`.
    package static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            var at = 0
            for byte in bytes {
                out[at] = digit(byte >> 4)
                out[at + 1] = digit(byte & 15)
                at += 2
            }
            return at
        }
    }

    private static func digit(_ value: UInt8) -> UInt8 { value < 10 ? 48 + value : 87 + value }
    /// Bytes of a hex string, nil when malformed.
    package static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c { case 48...57: c - 48; case 97...102: c - 87; case 65...70: c - 55; default: nil }
        }
        var out = [UInt8]()
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let hi = value(chars[i]), let lo = value(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo); i += 2
        }
        return out
    }
}

extension SHA256 {
    /// Copies the file at `source` to a new file `target` (which must not exist), hashing the
    /// bytes on the way; returns the copy's hex SHA-256 and size. A link at `source` is refused:
    /// store files (of a shard, of an old image) are regular files, and a planted link would copy
    /// any file the process can read into the new image.
    package static func copyFile(_ source: String, to target: String) throws(FileError) -> (hex: String, size: Int64) {
        let input = try ReadableFile(path: source, followLinks: false)
        let output = try WritableFile(path: target, exclusive: true)
        let hasher = SHA256()
        var size: Int64 = 0
        try input.forEachChunk { chunk in
            hasher.update(chunk)
            size += Int64(chunk.count)
            try output.write(chunk)
        }
        try output.close(sync: false)
        return (hasher.finalizeHex(), size)
    }
}

extension SHA256 {
    /// What `checkFile` found.
    package enum FileCheck: Sendable, Equatable {
        case missing
        case notRegular
        case regular(size: Int64, hex: String?)
    }

    /// Opens `path` without following a link, checks it is a regular file (`fstat`), and hashes
    /// it when `hash`: one open per file, no separate stat pass.
    package static func checkFile(_ path: String, hash: Bool, buffer: UnsafeMutableRawBufferPointer) throws(FileError) -> FileCheck {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT || errno == ENOTDIR { return .missing }
            if errno == ELOOP { return .notRegular }
            throw FileError("open", path)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileError("fstat", path) }
        guard info.st_mode & S_IFMT == S_IFREG else { return .notRegular }
        guard hash else { return .regular(size: Int64(info.st_size), hex: nil) }
        let hasher = SHA256()
        var size: Int64 = 0
        while true {
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n < 0 { if errno == EINTR { continue }; throw FileError("read", path) }
            if n == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            size += Int64(n)
        }
        return .regular(size: size, hex: hasher.finalizeHex())
    }
}

extension SHA256 {
    /// The linked libcrypto's version (`OpenSSL_version`).
    package static var libraryVersion: String { String(cString: OpenSSL_version(0)) }
}
