import Foundation
import MapFetch
import MapFormat
import MapIO
import Synchronization
import TestSupport
import Testing

/// Chunked fetches (issue 21) through a real nginx (range requests) and the fault server: only the
/// chunks the seed lacks travel, every chunk and the bundle's SHA-256 are checked, a bad or short
/// chunk is fetched again, and a server that ignores Range makes the caller download whole.
@Suite struct ChunkedFetchTests {
    /// A bundle in zchunk form served from `served/new.zck`, and the plain tars of its old version and of nothing.
    struct Fixture {
        let folder = TemporaryFolder("chunked-fetch")
        let digest: BundleDigest
        let size: Int64
        let chunked: ChunkedBundle
        var served: String { folder.join("served") }
        var oldTar: String { folder.join("old.tar") }
        var emptyTar: String { folder.join("empty.tar") }

        init() throws {
            for name in ["old", "new", "empty", "served"] { try FileSystem.makeDirectories(folder.join(name)) }
            var random = SystemRandomNumberGenerator()
            let words = (0..<400).map { _ in String(random.next() as UInt64, radix: 36) }
            for file in 0..<24 {
                // Compressible text of random words, 96 KiB a file.
                var text = ""
                var seeded = UInt64(file) &* 0x9E37_79B9_7F4A_7C15 | 1
                while text.utf8.count < 96 << 10 {
                    seeded ^= seeded << 13
                    seeded ^= seeded >> 7
                    seeded ^= seeded << 17
                    text += words[Int(seeded % UInt64(words.count))] + (seeded % 11 == 0 ? "\n" : " ")
                }
                var new = Array(text.utf8)
                try Data(new).write(to: URL(fileURLWithPath: folder.join("old/f\(file).txt")))
                if file % 8 == 3 {
                    // An edit of 2 KiB in the middle of three of the files.
                    for i in 40_000..<42_048 { new[i] = UInt8(ascii: "A") + UInt8(i % 26) }
                }
                try Data(new).write(to: URL(fileURLWithPath: folder.join("new/f\(file).txt")))
            }
            for (name, tar) in [("old", folder.join("old.tar")), ("new", folder.join("new.tar")), ("empty", folder.join("empty.tar"))] {
                let writer = try ArchiveWriter(path: tar, mtime: 0, compressed: false)
                try writer.addTree(folder.join(name))
                try writer.finish()
            }
            let zck = folder.join("served/new.zck")
            let parameters = Zchunk.Parameters.publisher(tarSize: 1 << 30)
            let written = try Zchunk.compress(folder.join("new.tar"), to: zck, parameters: parameters)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: zck))
            let data = bytes.subdata(in: Int(written.headerSize)..<bytes.count)
            digest = BundleDigest(hex: MapIO.SHA256.hex(data))
            size = Int64(data.count)
            chunked = parameters.recorded(
                in: ChunkedBundle(
                    url: "new.zck", size: written.size, headerSize: written.headerSize,
                    headerSHA256: MapIO.SHA256.hex(bytes.prefix(Int(written.headerSize)))))
        }

        func fetch(_ url: URL, seed: String) async -> (Result<ChunkedFetch.Outcome, ChunkedFetch.Fallback>, DownloadCache) {
            let cache = DownloadCache(root: folder.join("cache-\(UUID().uuidString)"))
            try? FileSystem.makeDirectories(cache.root + "/partial")
            let curl = CurlMulti(connectionsPerHost: 2)
            defer { curl.shutdown() }
            let fetcher = ChunkedFetch(cache: cache, scratch: folder.join("scratch"))
            return (await fetcher.fetch(digest, size: size, url: url, chunked: chunked, seedTar: seed, curl: curl), cache)
        }

        /// The byte ranges (merged as the fetch merges them) that a fetch seeded with `seed` asks for.
        func missingRanges(seed: String) throws -> [ClosedRange<Int64>] {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: folder.join("served/new.zck")))
            let target = try Zchunk.Target(path: folder.join("probe-\(UUID().uuidString).zck"), header: bytes.prefix(Int(chunked.headerSize)))
            let seedChunks = try SeedChunks.write(
                tar: seed, to: folder.join("probe-seed-\(UUID().uuidString)"), parameters: Zchunk.Parameters(chunked))
            try target.copyChunks(from: seedChunks)
            var ranges: [ClosedRange<Int64>] = []
            for chunk in try target.checkChunks() {
                let range = chunk.start...(chunk.start + chunk.length - 1)
                if let last = ranges.last, last.upperBound + 1 == range.lowerBound {
                    ranges[ranges.count - 1] = last.lowerBound...range.upperBound
                } else {
                    ranges.append(range)
                }
            }
            return ranges
        }

        /// The cached bundle is the bundle.
        func expectCached(_ cache: DownloadCache) throws {
            #expect(cache.contains(digest))
            #expect(try MapIO.SHA256.digestOfFile(cache.path(for: digest)).digest == digest.sha256)
        }
    }

    @Test func throughNginxOnlyTheChangedChunksAreDownloaded() async throws {
        let fixture = try Fixture()
        let nginx = try NginxServer(root: fixture.served)
        defer { nginx.stop() }
        let (result, cache) = await fixture.fetch(nginx.baseURL.appendingPathComponent("new.zck"), seed: fixture.oldTar)
        let outcome = try result.get()
        try fixture.expectCached(cache)
        #expect(outcome.size == fixture.size)
        #expect(outcome.reused > 0)
        #expect(outcome.downloaded < fixture.size / 2, "downloaded \(outcome.downloaded) of \(fixture.size)")
        #expect(Int64(nginx.bytesSent(path: "/new.zck")) <= outcome.downloaded + 4096)
    }

    @Test func throughNginxTheMissingChunksComeInOneMultiRangeRequest() async throws {
        let fixture = try Fixture()
        let missing = try fixture.missingRanges(seed: fixture.oldTar)
        try #require(missing.count >= 2, "the fixture's edits leave gaps between missing chunks")
        let nginx = try NginxServer(root: fixture.served)
        defer { nginx.stop() }
        let (result, cache) = await fixture.fetch(nginx.baseURL.appendingPathComponent("new.zck"), seed: fixture.oldTar)
        _ = try result.get()
        try fixture.expectCached(cache)
        // The header, then every missing range in one request answered as multipart/byteranges.
        #expect(nginx.requests(path: "/new.zck") == 2)
        let chunkBytes = missing.reduce(Int64(0)) { $0 + $1.upperBound - $1.lowerBound + 1 }
        #expect(Int64(nginx.bytesSent(path: "/new.zck")) <= fixture.chunked.headerSize + chunkBytes + Int64(missing.count) * 200)
    }

    /// A fetch through the fault server with `fault` (and the query `parameters` made from the fixture)
    /// applied to the first `times` requests; the bundle is cached, whole and right.
    func fetchThroughFault(
        _ fault: String, times: Int = 1000, _ parameters: (Fixture) -> [String: String] = { _ in [:] }
    ) async throws -> (ChunkedFetch.Outcome, ServedPath, Int) {
        let fixture = try Fixture()
        let missing = try fixture.missingRanges(seed: fixture.oldTar)
        try #require(missing.count >= 2)
        let server = try FaultServer(root: fixture.served)
        defer { server.stop() }
        var query = parameters(fixture)
        query["times"] = "\(times)"
        let (result, cache) = await fixture.fetch(server.url("new.zck", fault: fault, query), seed: fixture.oldTar)
        let outcome = try result.get()
        try fixture.expectCached(cache)
        return (outcome, try server.served("/new.zck"), missing.count)
    }

    /// A device's seed is compressed byte for byte as libzck compresses the bundle (zstd's btopt
    /// strategy at the catalog's level): a seed of the very tar a `.zck` was written from has every
    /// one of its chunks, at any level a catalog may name.
    @Test(arguments: [3, 6, 12])
    func aSeedOfTheSameTarHasEveryChunkLibzckWrote(_ level: Int32) throws {
        let fixture = try Fixture()
        var parameters = Zchunk.Parameters(fixture.chunked)
        parameters.level = level
        let zck = fixture.folder.join("level-\(level).zck")
        let written = try Zchunk.compress(fixture.folder.join("new.tar"), to: zck, parameters: parameters)
        let seed = try SeedChunks.write(tar: fixture.folder.join("new.tar"), to: fixture.folder.join("level-\(level).seed"), parameters: parameters)
        let header = try Data(contentsOf: URL(fileURLWithPath: zck)).prefix(Int(written.headerSize))
        let target = try Zchunk.Target(path: fixture.folder.join("level-\(level).copy.zck"), header: header)
        #expect(target.chunks().count > 100)
        try target.copyChunks(from: seed)
        #expect(try target.checkChunks().isEmpty)
        #expect(target.isComplete())
    }

    @Test func seedCopiesOnManyThreadsAtOnceStayWhole() throws {
        let fixture = try Fixture()
        let seed = try SeedChunks.write(tar: fixture.oldTar, to: fixture.folder.join("seed"), parameters: Zchunk.Parameters(fixture.chunked))
        let header = try Data(contentsOf: URL(fileURLWithPath: fixture.folder.join("served/new.zck"))).prefix(Int(fixture.chunked.headerSize))
        let copies = fixture.folder.join("copies")
        try FileSystem.makeDirectories(copies)
        @Sendable func missing(_ index: Int) -> Int {
            guard let target = try? Zchunk.Target(path: copies + "/\(index).zck", header: header),
                (try? target.copyChunks(from: seed)) != nil, let missing = try? target.checkChunks()
            else { return -1 }
            return missing.count
        }
        let alone = missing(0)
        #expect(alone > 0 && alone < 40, "\(alone)")
        let counts = Mutex([Int](repeating: 0, count: 16))
        DispatchQueue.concurrentPerform(iterations: 16) { index in
            let count = missing(index + 1)
            counts.withLock { $0[index] = count }
        }
        #expect(counts.withLock { $0 } == [Int](repeating: alone, count: 16))
    }

    @Test func aServerThatAnswersMultiRangeWithTheWholeFileGetsSingleRanges() async throws {
        let (outcome, served, missing) = try await fetchThroughFault("ignore-multirange")
        // The header, the multi-range request (stopped at its 200), then one request per range.
        #expect(served.requests == 2 + missing)
        #expect(outcome.requests == 1 + missing)
        #expect(outcome.downloaded < outcome.size / 2)
    }

    @Test func aRefusedMultiRangeRequestIsNotTriedAgainForTheNextBundle() async throws {
        let fixture = try Fixture()
        let missing = try fixture.missingRanges(seed: fixture.oldTar).count
        try #require(missing >= 2)
        let server = try FaultServer(root: fixture.served)
        defer { server.stop() }
        let curl = CurlMulti(connectionsPerHost: 2)
        defer { curl.shutdown() }
        let cache = DownloadCache(root: fixture.folder.join("cache-shared"))
        try FileSystem.makeDirectories(cache.root + "/partial")
        // One fetcher for both bundles, as one update's jobs share one.
        let fetcher = ChunkedFetch(cache: cache, scratch: fixture.folder.join("scratch"))
        let url = server.url("new.zck", fault: "ignore-multirange")
        for round in 0..<2 {
            let outcome = try await fetcher.fetch(
                fixture.digest, size: fixture.size, url: url, chunked: fixture.chunked, seedTar: fixture.oldTar, curl: curl
            ).get()
            try fixture.expectCached(cache)
            // The first bundle tries one multi-range request; the second goes straight to single ranges.
            #expect(outcome.requests == (round == 0 ? 1 : 0) + missing, "round \(round): \(outcome)")
            try cache.evict(fixture.digest)
        }
        #expect(try server.served("/new.zck").requests == (2 + missing) + (1 + missing))
    }

    @Test func aServerThatAnswersOneRangeGetsTheOthersOneByOne() async throws {
        let (_, served, missing) = try await fetchThroughFault("single-range")
        #expect(served.requests == 2 + missing - 1)
    }

    @Test func aDamagedBoundaryMeansThePartsAfterItAreFetchedAgain() async throws {
        // Request 1 (the header) asks for one range and is not touched; request 2 is damaged.
        let (outcome, served, _) = try await fetchThroughFault("bad-boundary", times: 2)
        #expect(served.requests == 3)
        #expect(outcome.requests == 2)
    }

    @Test func aPartOfAnotherRangeIsNotWrittenAndFetchedAgain() async throws {
        let (outcome, served, _) = try await fetchThroughFault("bad-part-range", times: 2)
        #expect(served.requests == 3)
        #expect(outcome.requests == 2)
    }

    @Test func aTruncatedMultipartAnswerIsCompletedByTheNextRound() async throws {
        // Request 1 (the header) is left alone; request 2, the multi-range answer, is cut 200 bytes in
        // (inside its first part: a cut relative to the header's size could fall past the end of an
        // answer whose random-text chunks compressed well, and then nothing was cut).
        let (outcome, served, _) = try await fetchThroughFault("truncate", times: 2) { _ in ["after": "200", "skip": "1"] }
        #expect(served.requests >= 3)
        #expect(outcome.requests >= 2)
    }

    @Test func aFlippedByteInAPartIsFetchedAgainNeverCached() async throws {
        let fixture = try Fixture()
        let missing = try fixture.missingRanges(seed: fixture.oldTar)
        try #require(missing.count >= 2)
        let server = try FaultServer(root: fixture.served)
        defer { server.stop() }
        let at = missing[1].lowerBound + 10
        let (result, cache) = await fixture.fetch(server.url("new.zck", fault: "flip", ["at": "\(at)", "times": "2"]), seed: fixture.oldTar)
        let outcome = try result.get()
        try fixture.expectCached(cache)
        #expect(outcome.requests == 2, "the damaged chunk was fetched again: \(outcome)")
        #expect(try server.served("/new.zck").requests == 3)
    }

    @Test func aServerThatIgnoresRangeGivesTheBundleInTheOneRequestForTheHeader() async throws {
        let fixture = try Fixture()
        let server = try FaultServer(root: fixture.served)
        defer { server.stop() }
        let (result, cache) = await fixture.fetch(server.url("new.zck", fault: "ignore-range"), seed: fixture.oldTar)
        // The 200 brings the whole .zck, whose data section is the bundle: kept, not fetched again.
        let outcome = try result.get()
        try fixture.expectCached(cache)
        #expect(outcome.downloaded == fixture.chunked.size)
        #expect(outcome.reused == 0)
        #expect(try server.served("/new.zck").requests == 1)
    }

    @Test func aWholeFileCutShortWhenRangeIsIgnoredIsNotCached() async throws {
        let fixture = try Fixture()
        let server = try FaultServer(root: fixture.served)
        defer { server.stop() }
        let (result, cache) = await fixture.fetch(server.url("new.zck", fault: "ignore-range,truncate", ["after": "50000"]), seed: fixture.oldTar)
        guard case .failure(let fallback) = result else {
            Issue.record("expected a fallback, got \(result)")
            return
        }
        #expect(fallback.reason.contains("header"), "\(fallback)")
        #expect(!cache.contains(fixture.digest))
    }

    @Test func aWholeFileWithAFlippedByteWhenRangeIsIgnoredIsNotCached() async throws {
        let fixture = try Fixture()
        let server = try FaultServer(root: fixture.served)
        defer { server.stop() }
        let at = "\(fixture.chunked.headerSize + 777)"
        let (result, cache) = await fixture.fetch(server.url("new.zck", fault: "ignore-range,flip", ["at": at]), seed: fixture.oldTar)
        guard case .failure(let fallback) = result else {
            Issue.record("expected a fallback, got \(result)")
            return
        }
        #expect(fallback.reason.contains("SHA-256"), "\(fallback)")
        #expect(!cache.contains(fixture.digest))
    }

    @Test func aFlippedChunkByteIsFetchedAgainNeverCached() async throws {
        let fixture = try Fixture()
        let server = try FaultServer(root: fixture.served)
        defer { server.stop() }
        // Request 1 is the header, request 2 the one range of every chunk (the seed is empty): flipped there only.
        let url = server.url("new.zck", fault: "flip", ["at": "\(fixture.chunked.headerSize + 5000)", "times": "2"])
        let (result, cache) = await fixture.fetch(url, seed: fixture.emptyTar)
        let outcome = try result.get()
        try fixture.expectCached(cache)
        #expect(outcome.requests == 2, "the damaged chunk was fetched again: \(outcome)")
        #expect(try server.served("/new.zck").requests == 3)
    }

    @Test func aTruncatedRangeIsCompletedByTheNextRound() async throws {
        let fixture = try Fixture()
        let server = try FaultServer(root: fixture.served)
        defer { server.stop() }
        let url = server.url("new.zck", fault: "truncate", ["after": "20000", "times": "2"])
        let (result, cache) = await fixture.fetch(url, seed: fixture.emptyTar)
        let outcome = try result.get()
        try fixture.expectCached(cache)
        #expect(outcome.requests >= 2)
    }

    @Test func aHeaderThatDoesNotMatchTheCatalogIsNotUsed() async throws {
        let fixture = try Fixture()
        let nginx = try NginxServer(root: fixture.served)
        defer { nginx.stop() }
        let cache = DownloadCache(root: fixture.folder.join("cache-bad"))
        let curl = CurlMulti(connectionsPerHost: 1)
        defer { curl.shutdown() }
        var wrong = fixture.chunked
        wrong.headerSHA256 = String(repeating: "0", count: 64)
        let result = await ChunkedFetch(cache: cache, scratch: fixture.folder.join("scratch")).fetch(
            fixture.digest, size: fixture.size, url: nginx.baseURL.appendingPathComponent("new.zck"), chunked: wrong, seedTar: fixture.oldTar,
            curl: curl)
        guard case .failure(let fallback) = result else {
            Issue.record("expected a fallback")
            return
        }
        #expect(fallback.reason.contains("headerSHA256"))
        #expect(!cache.contains(fixture.digest))
    }
}
