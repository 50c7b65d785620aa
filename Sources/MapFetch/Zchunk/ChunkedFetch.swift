import Foundation
import MapFormat
import MapIO
import Synchronization

/// Fetches a bundle that has a zchunk form (issue 21) from the chunks an older version already
/// holds plus range requests for the rest, and puts it in the download cache only once its
/// SHA-256 matches the catalog. Whatever goes wrong, nothing unverified enters the cache, and the
/// caller downloads the bundle whole as before (`nil`): this path only ever saves bytes.
package struct ChunkedFetch: Sendable {
    /// What one chunked fetch did.
    package struct Outcome: Sendable, Equatable {
        /// Bytes received from the server: the header and the missing chunks.
        package let downloaded: Int64
        /// Bytes of the bundle taken from the seed.
        package let reused: Int64
        /// Bytes of the bundle.
        package let size: Int64
        /// Range requests made.
        package let ranges: Int
    }

    /// Why a chunked fetch gave way to a whole download.
    package struct Fallback: Error, Sendable, CustomStringConvertible {
        package let bundle: BundleDigest
        package let url: URL
        package let reason: String
        /// Bytes received before giving up (they count as downloaded).
        package let downloaded: Int64
        package init(bundle: BundleDigest, url: URL, reason: String, downloaded: Int64) {
            self.bundle = bundle
            self.url = url
            self.reason = reason
            self.downloaded = downloaded
        }
        package var description: String { "bundle \(bundle): chunked update from \(url.absoluteString) not used (\(reason)); downloading it whole" }
    }

    /// Where verified bundles go.
    package let cache: DownloadCache
    /// A folder for the files being assembled (removed afterwards).
    package let scratch: String
    /// Attempts per range before giving up on the chunked path.
    package var attempts = 3

    package init(cache: DownloadCache, scratch: String) {
        self.cache = cache
        self.scratch = scratch
    }

    /// Fetches bundle `digest` (`size` bytes) through its `.zck` at `url`, described by `chunked`,
    /// reusing the chunks of the plain tar at `seedTar` (the older version's files).
    package func fetch(
        _ digest: BundleDigest, size: Int64, url: URL, chunked: ChunkedBundle, seedTar: String,
        curl: CurlMulti
    ) async -> Result<Outcome, Fallback> {
        var downloaded: Int64 = 0
        func fallback(_ reason: String) -> Result<Outcome, Fallback> {
            .failure(Fallback(bundle: digest, url: url, reason: reason, downloaded: downloaded))
        }
        guard chunked.headerSize > 0, chunked.headerSize <= ChunkedBundle.maxHeaderSize, chunked.size - chunked.headerSize == size else {
            return fallback("the catalog's chunked sizes do not add up to the bundle's")
        }
        do { try FileSystem.makeDirectories(scratch) } catch { return fallback(error.description) }
        let zckPath = scratch + "/\(digest.hex).zck"
        let seedPath = scratch + "/\(digest.hex).seed.zck"
        defer {
            try? FileSystem.removeFile(zckPath)
            try? FileSystem.removeFile(seedPath)
        }

        // 1. The header, checked against the catalog before libzck parses it.
        let header = HeaderBuffer(limit: Int(chunked.headerSize))
        let headerReceiver = RangeReceiver(start: 0, end: chunked.headerSize - 1) { bytes, _ in header.append(bytes) }
        var request = CurlRequest(url: url)
        request.rangeEnd = chunked.headerSize - 1
        let headerAnswer = headerReceiver.answer(await curl.perform(request, receiver: headerReceiver))
        downloaded += headerReceiver.received
        switch headerAnswer {
        case .complete: break
        case .ignoredRange: return fallback("the server ignores range requests")
        case .failed(let reason): return fallback("header: \(reason)")
        }
        let headerBytes = header.data
        guard SHA256.hex(headerBytes) == chunked.headerSHA256 else { return fallback("the header does not match the catalog's headerSHA256") }

        do throws(ZchunkError) {
            let target = try Zchunk.Target(path: zckPath, header: headerBytes)
            guard target.headerSize == chunked.headerSize, target.size == chunked.size, target.dataDigest == digest.hex else {
                return fallback("the header describes another file than the catalog's bundle")
            }
            // 2. The chunks the older version has.
            _ = try Zchunk.compress(seedTar, to: seedPath)
            try target.copyChunks(from: seedPath)
            var missing = try target.checkChunks()
            let reused = size - missing.reduce(0) { $0 + $1.length }
            // 3. The rest by range, adjacent chunks in one request; a chunk that fails its digest is fetched again.
            var ranges = 0
            var round = 0
            while !missing.isEmpty {
                round += 1
                if round > attempts { return fallback("chunks still failing their digests after \(attempts) rounds") }
                for range in Self.ranges(of: missing) {
                    ranges += 1
                    let receiver = RangeReceiver(start: range.lowerBound, end: range.upperBound) { bytes, offset in
                        (try? target.write(bytes, at: offset)) != nil
                    }
                    var request = CurlRequest(url: url, rangeStart: range.lowerBound)
                    request.rangeEnd = range.upperBound
                    let answer = receiver.answer(await curl.perform(request, receiver: receiver))
                    downloaded += receiver.received
                    if Task.isCancelled { return fallback("cancelled") }
                    switch answer {
                    case .complete, .failed: break  // a short or failed range leaves its chunks missing for the next round
                    case .ignoredRange: return fallback("the server ignores range requests")
                    }
                }
                missing = try target.checkChunks()
            }
            guard target.isComplete() else { return fallback("the assembled file does not match its data digest") }
            // 4. The bundle is the data section; it enters the cache only with the catalog's SHA-256.
            let partial = cache.partialPath(for: digest) + ".chunked"
            let hex: String
            do {
                try cache.ensureFolder(FileSystem.parent(partial))
                try? FileSystem.removeFile(partial)
                hex = try Self.copyData(of: zckPath, from: target.headerSize, count: size, to: partial)
            } catch {
                try? FileSystem.removeFile(partial)
                return fallback(error.description)
            }
            guard hex == digest.hex else {
                try? FileSystem.removeFile(partial)
                return fallback("the assembled bundle's SHA-256 is \(hex), not the catalog's")
            }
            do { try cache.admit(verifiedFile: partial, digest: digest) } catch {
                try? FileSystem.removeFile(partial)
                return fallback(error.description)
            }
            return .success(Outcome(downloaded: downloaded, reused: reused, size: size, ranges: ranges))
        } catch {
            return fallback(error.description)
        }
    }

    /// Byte ranges (inclusive) covering `chunks`, adjacent chunks merged.
    static func ranges(of chunks: [Zchunk.Target.Chunk]) -> [ClosedRange<Int64>] {
        var out: [ClosedRange<Int64>] = []
        for chunk in chunks.sorted(by: { $0.start < $1.start }) {
            let range = chunk.start...(chunk.start + chunk.length - 1)
            if let last = out.last, last.upperBound + 1 == range.lowerBound {
                out[out.count - 1] = last.lowerBound...range.upperBound
            } else {
                out.append(range)
            }
        }
        return out
    }

    /// Copies `count` bytes of `path` from `offset` to a new file `target` (fsynced, for the cache), returning their hex SHA-256.
    static func copyData(of path: String, from offset: Int64, count: Int64, to target: String) throws(FileError) -> String {
        let copied = try SHA256.copyRange(of: path, from: offset, count: count, to: target)
        guard copied.size == count else { throw FileError("read (file ends early)", path, code: EIO) }
        return copied.hex
    }
}

/// The header's bytes as they arrive, up to a limit.
private final class HeaderBuffer: Sendable {
    private let bytes = Mutex(Data())
    private let limit: Int
    init(limit: Int) { self.limit = limit }
    func append(_ chunk: UnsafeRawBufferPointer) -> Bool {
        bytes.withLock { data in
            guard data.count + chunk.count <= limit else { return false }
            data.append(contentsOf: chunk)
            return true
        }
    }
    var data: Data { bytes.withLock { $0 } }
}
