import Foundation
import MapFormat
import MapIO

/// One bundle's partial file in the cache, its running SHA-256 and the validator (ETag or Last-Modified)
/// that lets a later attempt or run resume it with `If-Range`.
///
/// It receives response bytes on the transfer thread during an attempt and is read by the download task
/// between attempts; the two never overlap (the attempt's continuation orders them), hence `@unchecked`.
final class PartialDownload: CurlReceiver, @unchecked Sendable {
    /// Why the receiver stopped a transfer itself.
    enum Refusal: Equatable {
        /// The body would exceed the declared size.
        case tooLarge(received: Int64)
        /// A 206 whose `Content-Range` does not start where the partial file ends.
        case unexpectedRange(String)
        /// The server answered with an error status; its body is not the bundle.
        case status(Int)
        /// Writing the partial file failed.
        case write(FileError)
    }

    let request: FetchRequest
    let path: String
    let metaPath: String
    private let events: @Sendable (FetchEvent) -> Void
    private let progressInterval: Double
    private let cache: DownloadCache
    /// False while this object knows no validator file was left or written (saves an unlink per bundle).
    private var metaMayExist = false
    /// Bundles from this size on keep their validator in a build's (non-durable) cache, so they resume.
    static let resumableSize: Int64 = 1 << 20

    /// Bytes in the partial file, all of them fed to `hasher`.
    private(set) var length: Int64 = 0
    /// The validator of the response the partial file's bytes came from.
    private(set) var validator: String?
    /// Set when the receiver stopped the last transfer.
    private(set) var refusal: Refusal?
    private var hasher = SHA256()
    private var file: WritableFile?
    private var rangeStart: Int64 = 0
    private var lastProgress = Date.distantPast

    init(request: FetchRequest, cache: DownloadCache, progressInterval: Double, events: @escaping @Sendable (FetchEvent) -> Void) {
        self.request = request
        self.path = cache.partialPath(for: request.digest)
        self.metaPath = cache.partialMetaPath(for: request.digest)
        self.events = events
        self.progressInterval = progressInterval
        self.cache = cache
    }

    // MARK: Between attempts (blocking; called off the cooperative pool)

    /// Picks up a partial file left by an earlier run: re-hashes its bytes (streamed) so the digest covers
    /// the whole file, and reads its validator. A partial longer than the declared size is discarded.
    func open() throws(FileError) {
        try cache.ensureFolder(FileSystem.parent(path))
        hasher = SHA256()
        length = 0
        validator = nil
        let status = try FileSystem.status(path)
        // A link planted where the partial file belongs is removed (unlink never follows it), never written through.
        if status?.isSymlink == true { try FileSystem.removeFile(path) }
        if let status, status.isRegular, status.size > 0, status.size <= request.size {
            let reader = try ReadableFile(path: path, followLinks: false)
            var hashed: Int64 = 0
            try unsafe reader.forEachChunk { chunk in
                unsafe hasher.update(chunk)
                hashed += Int64(chunk.count)
            }
            length = hashed
            validator = (try? ReadableFile.contents(of: metaPath, limit: 4096, followLinks: false)).flatMap { String(data: $0, encoding: .utf8) }
            metaMayExist = true
            file = try WritableFile(path: path, append: true)
        } else {
            try restartFile()
        }
    }

    /// Prepares for an attempt that asks for bytes from `length` on.
    func beginAttempt() {
        refusal = nil
        rangeStart = length
    }

    /// Throws away every byte so the next attempt starts from zero.
    func discard() throws(FileError) {
        try restartFile()
    }

    /// The SHA-256 of all bytes received; call once the file is complete.
    func finishedDigest() -> SHA256Digest {
        let digest = hasher.finalize()
        hasher = SHA256()
        return digest
    }

    /// Closes the file (fsynced when `sync`), keeping it for a later run.
    func close(sync: Bool) throws(FileError) {
        defer { file = nil }
        try file?.close(sync: sync)
    }

    /// Deletes the partial file and its validator.
    func remove() {
        file = nil
        try? FileSystem.removeFile(path)
        removeMeta()
        length = 0
        validator = nil
    }

    /// Deletes the validator file, if there may be one.
    func removeMeta() {
        guard metaMayExist || cache.durable else { return }
        try? FileSystem.removeFile(metaPath)
        metaMayExist = false
    }

    private func restartFile() throws(FileError) {
        file = nil
        removeMeta()
        file = try WritableFile(path: path)
        hasher = SHA256()
        length = 0
        validator = nil
    }

    // MARK: During an attempt (transfer thread)

    func receive(head: CurlResponseHead) -> Bool {
        let status = head.status
        if status >= 300 {
            refusal = .status(status)
            return false
        }
        if status == 206 {
            // Only a range that starts exactly where the file ends may be appended.
            let range = head.headers["content-range"] ?? ""
            guard let start = Self.rangeStart(of: range), start == rangeStart else {
                refusal = .unexpectedRange(
                    range.isEmpty ? "206 without Content-Range" : "Content-Range '\(range)' for a request from byte \(rangeStart)")
                return false
            }
            if let total = Self.rangeTotal(of: range), total > request.size {
                refusal = .tooLarge(received: total)
                return false
            }
            return true
        }
        // `file://` (status 0) honours the range itself; an HTTP 200 is the whole file again.
        if status == 0 && rangeStart > 0 { return true }
        if rangeStart > 0 {
            do throws(FileError) { try restartFile() } catch {
                refusal = .write(error)
                return false
            }
        }
        if let declared = head.headers["content-length"].flatMap({ Int64($0) }), declared > request.size {
            refusal = .tooLarge(received: declared)
            return false
        }
        saveValidator(from: head.headers)
        return true
    }

    func receive(body: RawSpan) -> Bool {
        let total = length + Int64(body.byteCount)
        if total > request.size {
            refusal = .tooLarge(received: total)
            return false
        }
        guard let file else {
            refusal = .write(FileError(.write, path, code: EBADF))
            return false
        }
        do throws(FileError) { try file.write(body) } catch {
            refusal = .write(error)
            return false
        }
        hasher.update(body)
        length = total
        let now = Date()
        if now.timeIntervalSince(lastProgress) >= progressInterval || total == request.size {
            lastProgress = now
            events(.progress(request.digest, received: total, size: request.size))
        }
        return true
    }

    /// Keeps a strong ETag, else Last-Modified, beside the partial file; weak ETags cannot be used in `If-Range`.
    private func saveValidator(from headers: [String: String]) {
        var chosen: String?
        if let etag = headers["etag"], etag.hasPrefix("\"") { chosen = etag } else if let date = headers["last-modified"] { chosen = date }
        validator = chosen
        guard let chosen else {
            removeMeta()
            return
        }
        if cache.durable {
            try? FileSystem.writeAtomically(Data(chosen.utf8), to: metaPath)
            metaMayExist = true
        } else if request.size >= Self.resumableSize {
            // A torn validator only costs the resume: it no longer matches, so the next attempt starts over.
            try? WritableFile(path: metaPath).write(Data(chosen.utf8))
            metaMayExist = true
        }
        // A small bundle in a build's cache keeps no validator: if a run is killed while fetching it, the
        // next run fetches it again from zero, which costs less than a file per bundle on every build.
    }

    /// `N` of `bytes N-M/T`.
    static func rangeStart(of contentRange: String) -> Int64? {
        guard contentRange.hasPrefix("bytes ") else { return nil }
        let spec = contentRange.dropFirst(6)
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        return Int64(spec[..<dash].trimmingCharacters(in: .whitespaces))
    }

    /// `T` of `bytes N-M/T`; nil when `*`.
    static func rangeTotal(of contentRange: String) -> Int64? {
        guard let slash = contentRange.lastIndex(of: "/") else { return nil }
        return Int64(contentRange[contentRange.index(after: slash)...])
    }
}
