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
        /// Requests made for chunks (the header's not counted); one may ask for several ranges.
        package let requests: Int
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
    /// Set once a server answered a multi-range request with a `200` or a single range: the
    /// fetches that share this value (one update's bundles) then ask for one range at a time, so
    /// only the first bundle pays for what the server pushed before the refusal was seen.
    package let multiRangeRefused = SharedFlag()

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
        await fetch(digest, size: size, url: url, chunked: chunked, seedTar: seedTar, writingSeed: nil, curl: curl)
    }

    /// As `fetch(_:size:url:chunked:seedTar:curl:)`, with `writingSeed` writing the plain tar at
    /// `seedTar` first. The seed is written and compressed on `BlockingPool` threads while the header
    /// travels (the two are independent), and libzck's chunk checks and the final hash run there too,
    /// so the cooperative pool never waits on zstd, SHA-512 or the disk.
    package func fetch(
        _ digest: BundleDigest, size: Int64, url: URL, chunked: ChunkedBundle, seedTar: String,
        writingSeed: (@Sendable () throws -> Void)?, curl: CurlMulti
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
        let seedPath = scratch + "/\(digest.hex).seed"
        defer {
            try? FileSystem.removeFile(zckPath)
            try? FileSystem.removeFile(seedPath)
        }

        // 1. The seed, compressed as the publisher compressed the bundle (the catalog's chunk size
        // and level, not this device's defaults), while the header is fetched
        // and checked against the catalog before libzck parses it.
        let seed = Task {
            await BlockingPool.value { () -> Result<SeedChunks, SeedProblem> in
                do {
                    try writingSeed?()
                    return .success(try SeedChunks.write(tar: seedTar, to: seedPath, parameters: Zchunk.Parameters(chunked)))
                } catch {
                    return .failure(SeedProblem(reason: "\(error)"))
                }
            }
        }
        // A server that ignores Range answers with the whole .zck, whose data section is the bundle:
        // it is kept (header aside) rather than thrown away and downloaded again.
        let headerSize = chunked.headerSize
        let header = HeaderBuffer(limit: Int(headerSize))
        let wholePath = scratch + "/\(digest.hex).whole"
        let data = ScratchWriter(path: wholePath)
        defer { try? FileSystem.removeFile(wholePath) }
        let headerReceiver = RangeReceiver(start: 0, end: headerSize - 1, whole: chunked.size) { bytes, offset in
            let inHeader = Int(max(0, min(Int64(bytes.byteCount), headerSize - offset)))
            if inHeader > 0, !header.append(bytes.extracting(0..<inHeader)) { return false }
            guard inHeader < bytes.byteCount else { return true }
            return data.write(bytes.extracting(inHeader...), at: offset + Int64(inHeader) - headerSize)
        }
        var request = CurlRequest(url: url)
        request.rangeEnd = headerSize - 1
        let headerAnswer = headerReceiver.answer(await curl.perform(request, receiver: headerReceiver))
        downloaded += headerReceiver.received
        data.close()
        // Waited for on every path, so the files are not removed under it.
        let seedChunks = await seed.value
        switch headerAnswer {
        case .complete: break
        case .whole:
            if let problem = await admit(wholePath, digest: digest, size: size) { return fallback("the server ignores range requests; \(problem)") }
            return .success(Outcome(downloaded: downloaded, reused: 0, size: size, requests: 0))
        case .ignoredRange: return fallback("the server ignores range requests")
        case .failed(let reason): return fallback("header: \(reason)")
        }
        let headerBytes = header.data
        guard SHA256.hex(headerBytes) == chunked.headerSHA256 else { return fallback("the header does not match the catalog's headerSHA256") }
        if case .failure(let problem) = seedChunks { return fallback("the seed: \(problem.reason)") }

        do {
            let target = try await BlockingPool.run { try Zchunk.Target(path: zckPath, header: headerBytes) }
            guard target.headerSize == chunked.headerSize, target.size == chunked.size, target.dataDigest == digest.hex else {
                return fallback("the header describes another file than the catalog's bundle")
            }
            // 2. The chunks the older version has.
            var missing = try await BlockingPool.run {
                if case .success(let chunks) = seedChunks { try target.copyChunks(from: chunks) }
                return try target.checkChunks()
            }
            let reused = size - missing.reduce(0) { $0 + $1.length }
            // 3. The rest by range: several ranges per request while the server answers them as
            // multipart/byteranges, one range per request after it does not; a chunk that fails its
            // digest or came short is fetched again in the next round.
            var requests = 0
            var round = 0
            var multiRange = !multiRangeRefused.isSet
            while !missing.isEmpty {
                round += 1
                if round > attempts { return fallback("chunks still failing their digests after \(attempts) rounds") }
                var single: [ClosedRange<Int64>] = []
                for batch in Self.batches(of: Self.ranges(of: missing), multiRange: multiRange) {
                    if batch.count == 1 {
                        single.append(batch[0])
                        continue
                    }
                    requests += 1
                    let receiver = MultiRangeReceiver(asked: batch, total: target.size) { bytes, offset in
                        (try? target.write(bytes, at: offset)) != nil
                    }
                    var request = CurlRequest(url: url)
                    request.ranges = batch
                    let answer = receiver.answer(await curl.perform(request, receiver: receiver))
                    downloaded += receiver.received
                    if Task.isCancelled { return fallback("cancelled") }
                    switch answer {
                    case .complete, .failed: break  // what a bad or short part left missing comes in the next round
                    case .ignoredRanges, .singleRange:
                        multiRange = false
                        multiRangeRefused.set()
                        let done = receiver.completedRanges
                        single += batch.filter { !done.contains($0) }
                    }
                }
                for range in single {
                    requests += 1
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
                    case .ignoredRange, .whole: return fallback("the server ignores range requests")
                    }
                }
                missing = try await BlockingPool.run { try target.checkChunks() }
            }
            // 4. The bundle is the data section; it enters the cache only with the catalog's SHA-256.
            guard await BlockingPool.value({ target.isComplete() }) else { return fallback("the assembled file does not match its data digest") }
            if let problem = await admit(zckPath, from: target.headerSize, digest: digest, size: size) { return fallback(problem) }
            return .success(Outcome(downloaded: downloaded, reused: reused, size: size, requests: requests))
        } catch {
            return fallback("\(error)")
        }
    }

    /// Why the seed could not be written.
    private struct SeedProblem: Error {
        let reason: String
    }

    /// Copies `size` bytes of `path` from `offset` into the cache as bundle `digest` if their SHA-256
    /// is the digest (on a `BlockingPool` thread); nil when admitted, else why not.
    private func admit(_ path: String, from offset: Int64 = 0, digest: BundleDigest, size: Int64) async -> String? {
        let partial = cache.partialPath(for: digest) + ".chunked"
        let cache = self.cache
        return await BlockingPool.value { () -> String? in
            do {
                try cache.ensureFolder(FileSystem.parent(partial))
                try? FileSystem.removeFile(partial)
                let actual = try Self.copyData(of: path, from: offset, count: size, to: partial)
                guard actual == digest.sha256 else {
                    try? FileSystem.removeFile(partial)
                    return "the assembled bundle's SHA-256 is \(actual), not the catalog's"
                }
                try cache.admit(verifiedFile: partial, digest: digest)
                return nil
            } catch {
                try? FileSystem.removeFile(partial)
                return "\(error)"
            }
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

    /// Most ranges in one request, and most characters of its `Range` value: nginx takes request header
    /// lines up to 8 KiB by default (`large_client_header_buffers`), other servers less.
    static let maxRangesPerRequest = 200
    static let maxRangeSpec = 4000

    /// `ranges` grouped into requests: with `multiRange`, as many per request as the limits allow;
    /// without, one each.
    static func batches(of ranges: [ClosedRange<Int64>], multiRange: Bool) -> [[ClosedRange<Int64>]] {
        guard multiRange else { return ranges.map { [$0] } }
        var out: [[ClosedRange<Int64>]] = []
        var current: [ClosedRange<Int64>] = []
        var length = 0
        for range in ranges {
            let spec = "\(range.lowerBound)-\(range.upperBound)".utf8.count + 1
            if !current.isEmpty, current.count == maxRangesPerRequest || length + spec > maxRangeSpec {
                out.append(current)
                current = []
                length = 0
            }
            current.append(range)
            length += spec
        }
        if !current.isEmpty { out.append(current) }
        return out
    }

    /// Copies `count` bytes of `path` from `offset` to a new file `target` (fsynced, for the cache), returning their SHA-256.
    static func copyData(of path: String, from offset: Int64, count: Int64, to target: String) throws(FileError) -> SHA256Digest {
        let copied = try SHA256.copyRange(of: path, from: offset, count: count, to: target)
        guard copied.size == count else { throw FileError(.read, note: "(file ends early)", path, code: EIO) }
        return copied.digest
    }
}

/// A flag tasks share: false until one sets it.
package final class SharedFlag: Sendable {
    private let value = Atomic<Bool>(false)
    package init() {}
    package var isSet: Bool { value.load(ordering: .acquiring) }
    package func set() { value.store(true, ordering: .releasing) }
}

/// A scratch file written at offsets from the transfer thread, opened at the first write.
private final class ScratchWriter: Sendable {
    private let path: String
    private let file = Mutex<FileDescriptor?>(nil)
    init(path: String) { self.path = path }
    func write(_ bytes: RawSpan, at offset: Int64) -> Bool {
        file.withLock { file in
            do {
                if file == nil { file = try unsafe FileDescriptor.open(path, .readWrite, options: [.create, .truncate]) }
                try file?.writeAll(toAbsoluteOffset: offset, bytes)
                return true
            } catch {
                return false
            }
        }
    }
    func close() {
        file.withLock {
            try? $0?.close()
            $0 = nil
        }
    }
}

/// The header's bytes as they arrive, up to a limit.
private final class HeaderBuffer: Sendable {
    private let bytes = Mutex(Data())
    private let limit: Int
    init(limit: Int) { self.limit = limit }
    func append(_ chunk: RawSpan) -> Bool {
        bytes.withLock { data in
            guard data.count + chunk.byteCount <= limit else { return false }
            RawBytes.append(chunk, to: &data)
            return true
        }
    }
    var data: Data { bytes.withLock { $0 } }
}
