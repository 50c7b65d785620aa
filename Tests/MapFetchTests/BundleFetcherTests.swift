import Foundation
import MapFetch
import MapFormat
import MapIO
import TestSupport
import Testing

/// Parallel fetches from nginx and `file://`, and the shared download cache.
@Suite struct BundleFetcherTests {
    let bench = FetchBench()

    @Test func fetchesSeveralBundlesInParallelFromNginx() async throws {
        let bundles = try (0..<6).map { try TestBundle(in: bench.served.path, name: "b\($0).bin", size: 200 * 1024 + $0) }
        let nginx = try NginxServer(root: bench.served.path)
        let log = EventLog()
        let paths = try await bench.fetcher(jobs: 3).fetch(
            bundles.map { $0.request(nginx.baseURL.appendingPathComponent($0.name)) }, events: log.record)
        #expect(paths.count == bundles.count)
        for bundle in bundles {
            #expect(bench.cached(bundle) == bundle.bytes)
            #expect(paths[bundle.digest] == bench.cache.path(for: bundle.digest))
            #expect(nginx.bytesSent(path: "/" + bundle.name) == bundle.bytes.count)
        }
        #expect(log.verified == bundles.count)
    }

    @Test func reusesConnectionsAcrossBundles() async throws {
        let bundles = try (0..<8).map { try TestBundle(in: bench.served.path, name: "r\($0).bin", size: 64 * 1024) }
        let nginx = try NginxServer(root: bench.served.path)
        _ = try await bench.fetcher(jobs: 2).fetch(bundles.map { $0.request(nginx.baseURL.appendingPathComponent($0.name)) }, events: { _ in })
        for bundle in bundles { #expect(bench.cached(bundle) == bundle.bytes) }
        #expect(nginx.connectionCount() <= 2)
    }

    @Test func multiplexesOverHTTP2WhenServerOffersIt() async throws {
        let bundles = try (0..<4).map { try TestBundle(in: bench.served.path, name: "h2-\($0).bin", size: 128 * 1024) }
        let nginx = try NginxServer(root: bench.served.path, tls: true)
        let fetcher = BundleFetcher(cache: bench.cache, jobs: 4, policy: .fast, trustedCertificates: nginx.certificate)
        _ = try await fetcher.fetch(bundles.map { $0.request(nginx.baseURL.appendingPathComponent($0.name)) }, events: { _ in })
        for bundle in bundles {
            #expect(bench.cached(bundle) == bundle.bytes)
            #expect(nginx.protocols(path: "/" + bundle.name) == ["HTTP/2.0"])
        }
        #expect(nginx.connectionCount() == 1)
    }

    @Test func refusesUntrustedCertificate() async throws {
        let bundle = try TestBundle(in: bench.served.path, name: "untrusted.bin")
        let nginx = try NginxServer(root: bench.served.path, tls: true)
        let error = await #expect(throws: FetchError.self) {
            _ = try await bench.fetcher().fetch([bundle.request(nginx.baseURL.appendingPathComponent(bundle.name))], events: { _ in })
        }
        #expect(error?.attempts == 1)
        #expect(bench.cached(bundle) == nil)
    }

    @Test func twoFetchersSharingOneCacheDownloadEachBundleOnce() async throws {
        let bundles = try (0..<4).map { try TestBundle(in: bench.served.path, name: "s\($0).bin") }
        let nginx = try NginxServer(root: bench.served.path)
        let requests = bundles.map { $0.request(nginx.baseURL.appendingPathComponent($0.name)) }
        let first = EventLog()
        let second = EventLog()
        async let one = bench.fetcher(jobs: 2).fetch(requests, events: first.record)
        async let two = bench.fetcher(jobs: 2).fetch(requests, events: second.record)
        let (a, b) = try await (one, two)
        #expect(a == b)
        #expect(first.verified + second.verified == bundles.count)
        #expect(first.alreadyCached + second.alreadyCached == bundles.count)
        for bundle in bundles {
            #expect(nginx.requests(path: "/" + bundle.name) == 1)
            #expect(bench.cached(bundle) == bundle.bytes)
        }

        let third = EventLog()
        _ = try await bench.fetcher().fetch(requests, events: third.record)
        #expect(third.alreadyCached == bundles.count)
        #expect(third.verified == 0)
    }

    @Test func fetchesAndResumesFileURLs() async throws {
        let bundles = try (0..<3).map { try TestBundle(in: bench.served.path, name: "f\($0).bin") }
        let partial = bench.cache.partialPath(for: bundles[0].digest)
        try FileSystem.makeDirectories((partial as NSString).deletingLastPathComponent)
        try bundles[0].bytes.prefix(70_000).write(to: URL(fileURLWithPath: partial))
        let requests = bundles.map { $0.request(URL(fileURLWithPath: bench.served.join($0.name))) }
        _ = try await bench.fetcher().fetch(requests, events: { _ in })
        for bundle in bundles { #expect(bench.cached(bundle) == bundle.bytes) }
    }

    @Test func failsWhenServerFileIsShorterThanDeclared() async throws {
        let bundle = try TestBundle(in: bench.served.path, name: "short.bin", size: 64 * 1024)
        let nginx = try NginxServer(root: bench.served.path)
        let request = FetchRequest(
            digest: bundle.digest, url: nginx.baseURL.appendingPathComponent(bundle.name), size: bundle.size + 1000, regions: ["europe/ch"])
        let log = EventLog()
        let error = await #expect(throws: FetchError.self) {
            _ = try await bench.fetcher().fetch([request], events: log.record)
        }
        let failure = try #require(error)
        #expect(failure.attempts <= 2 * RetryPolicy.fast.maxAttempts)
        #expect(bench.cached(bundle) == nil)
    }

    @Test func discardsPartialLongerThanDeclared() async throws {
        let bundle = try TestBundle(in: bench.served.path, name: "long-partial.bin", size: 64 * 1024)
        let partial = bench.cache.partialPath(for: bundle.digest)
        try FileSystem.makeDirectories((partial as NSString).deletingLastPathComponent)
        try (bundle.bytes + Data(count: 10)).write(to: URL(fileURLWithPath: partial))
        _ = try await bench.fetcher().fetch([bundle.request(URL(fileURLWithPath: bench.served.join(bundle.name)))], events: { _ in })
        #expect(bench.cached(bundle) == bundle.bytes)
    }

    @Test func restartsWhenStoredValidatorNoLongerMatches() async throws {
        let bundle = try TestBundle(in: bench.served.path, name: "validator.bin")
        let nginx = try NginxServer(root: bench.served.path)
        // A partial from an older file with another ETag: nginx must answer the If-Range with the whole file.
        let partial = bench.cache.partialPath(for: bundle.digest)
        try FileSystem.makeDirectories((partial as NSString).deletingLastPathComponent)
        try Data(repeating: 0xAB, count: 50_000).write(to: URL(fileURLWithPath: partial))
        try Data("\"old-etag\"".utf8).write(to: URL(fileURLWithPath: bench.cache.partialMetaPath(for: bundle.digest)))
        _ = try await bench.fetcher().fetch([bundle.request(nginx.baseURL.appendingPathComponent(bundle.name))], events: { _ in })
        #expect(bench.cached(bundle) == bundle.bytes)
        #expect(nginx.bytesSent(path: "/" + bundle.name) == bundle.bytes.count)
    }

    @Test func resumesFromNginxWithIfRange() async throws {
        let bundle = try TestBundle(in: bench.served.path, name: "if-range.bin")
        let nginx = try NginxServer(root: bench.served.path)
        // nginx's ETag is "<mtime hex>-<size hex>"; a partial from that same file must be continued, not restarted.
        let status = try #require(try FileSystem.status(bench.served.join(bundle.name)))
        let attributes = try FileManager.default.attributesOfItem(atPath: bench.served.join(bundle.name))
        let mtime = Int((attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)
        let etag = "\"\(String(mtime, radix: 16))-\(String(status.size, radix: 16))\""
        let partial = bench.cache.partialPath(for: bundle.digest)
        try FileSystem.makeDirectories((partial as NSString).deletingLastPathComponent)
        try bundle.bytes.prefix(100_000).write(to: URL(fileURLWithPath: partial))
        try Data(etag.utf8).write(to: URL(fileURLWithPath: bench.cache.partialMetaPath(for: bundle.digest)))
        _ = try await bench.fetcher().fetch([bundle.request(nginx.baseURL.appendingPathComponent(bundle.name))], events: { _ in })
        #expect(bench.cached(bundle) == bundle.bytes)
        #expect(nginx.bytesSent(path: "/" + bundle.name) == bundle.bytes.count - 100_000)
    }

    @Test func reportsProgressAtBoundedRate() async throws {
        let bundle = try TestBundle(in: bench.served.path, name: "progress.bin", size: 512 * 1024)
        let server = try FaultServer(root: bench.served.path)
        let log = EventLog()
        let started = Date()
        _ = try await bench.fetcher().fetch([bundle.request(server.url(bundle.name, fault: "trickle", ["rate": "400000"]))], events: log.record)
        let seconds = Date().timeIntervalSince(started)
        #expect(log.progress >= 2)
        #expect(Double(log.progress) <= seconds * 10 + 2)
    }
}
