import Foundation
import MapFetch
import MapFormat
import MapIO
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
            let written = try Zchunk.compress(folder.join("new.tar"), to: zck)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: zck))
            let data = bytes.subdata(in: Int(written.headerSize)..<bytes.count)
            digest = BundleDigest(hex: MapIO.SHA256.hex(data))
            size = Int64(data.count)
            chunked = ChunkedBundle(
                url: "new.zck", size: written.size, headerSize: written.headerSize,
                headerSHA256: MapIO.SHA256.hex(bytes.prefix(Int(written.headerSize))))
        }

        func fetch(_ url: URL, seed: String) async -> (Result<ChunkedFetch.Outcome, ChunkedFetch.Fallback>, DownloadCache) {
            let cache = DownloadCache(root: folder.join("cache-\(UUID().uuidString)"))
            try? FileSystem.makeDirectories(cache.root + "/partial")
            let curl = CurlMulti(connectionsPerHost: 2)
            defer { curl.shutdown() }
            let fetcher = ChunkedFetch(cache: cache, scratch: folder.join("scratch"))
            return (await fetcher.fetch(digest, size: size, url: url, chunked: chunked, seedTar: seed, curl: curl), cache)
        }

        /// The cached bundle is the bundle.
        func expectCached(_ cache: DownloadCache) throws {
            #expect(cache.contains(digest))
            #expect(try MapIO.SHA256.hexOfFile(cache.path(for: digest)).hex == digest.hex)
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

    @Test func aServerThatIgnoresRangeMeansAWholeDownload() async throws {
        let fixture = try Fixture()
        let server = try FaultServer(root: fixture.served)
        defer { server.stop() }
        let (result, cache) = await fixture.fetch(server.url("new.zck", fault: "ignore-range"), seed: fixture.oldTar)
        guard case .failure(let fallback) = result else {
            Issue.record("expected a fallback, got \(result)")
            return
        }
        #expect(fallback.reason.contains("ignores range"), "\(fallback)")
        #expect(fallback.downloaded < 64 << 10)
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
        #expect(outcome.ranges == 2, "the damaged chunk was fetched again: \(outcome)")
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
        #expect(outcome.ranges >= 2)
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
