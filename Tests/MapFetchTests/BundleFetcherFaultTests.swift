import Foundation
import MapFetch
import MapFormat
import MapIO
import TestSupport
import Testing

/// Each fault of the fault server: the fetch either ends with verified bytes in the cache or with a clear
/// error naming the bundle, and never leaves a wrong byte in the cache.
@Suite struct BundleFetcherFaultTests {
    let bench = FetchBench()

    private func setUp(_ name: String, size: Int = 256 * 1024) throws -> (TestBundle, FaultServer) {
        let bundle = try TestBundle(in: bench.served.path, name: name, size: size)
        return (bundle, try FaultServer(root: bench.served.path))
    }

    @Test func resumesAfterConnectionReset() async throws {
        let (bundle, server) = try setUp("reset.bin")
        let log = EventLog()
        _ = try await bench.fetcher().fetch(
            [bundle.request(server.url(bundle.name, fault: "reset", ["after": "60000", "times": "3"]))], events: log.record)
        #expect(bench.cached(bundle) == bundle.bytes)
        #expect(!FileSystem.exists(bench.cache.lockPath(for: bundle.digest)))
        #expect(log.retries.count == 3)
        let served = try server.served(bundle.name)
        #expect(served.requests == 4)
        #expect(Double(served.bytes) <= 1.1 * Double(bundle.size))
        #expect(!bench.partialExists(bundle))
    }

    @Test func resumesAfterTruncatedBody() async throws {
        let (bundle, server) = try setUp("truncate.bin")
        _ = try await bench.fetcher().fetch(
            [bundle.request(server.url(bundle.name, fault: "truncate", ["after": "100000", "times": "1"]))], events: { _ in })
        #expect(bench.cached(bundle) == bundle.bytes)
        #expect(Double(try server.served(bundle.name).bytes) <= 1.1 * Double(bundle.size))
    }

    @Test func restartsFromZeroWhenServerIgnoresRange() async throws {
        let (bundle, server) = try setUp("ignore-range.bin")
        // The first answer resets after 100000 bytes; the resume's Range is ignored and a 200 brings everything.
        let url = server.url(bundle.name, fault: "reset", ["after": "100000", "times": "1", "always": "ignore-range"])
        _ = try await bench.fetcher().fetch([bundle.request(url)], events: { _ in })
        #expect(bench.cached(bundle) == bundle.bytes)
        let served = try server.served(bundle.name)
        #expect(served.requests == 2)
        #expect(served.bytes == 100_000 + bundle.bytes.count)
    }

    @Test func restartsFromZeroWhenFileChangesBetweenAttempts() async throws {
        let (bundle, server) = try setUp("change.bin")
        // The first answer carries another ETag than the second, so If-Range makes the server send it all.
        _ = try await bench.fetcher().fetch(
            [bundle.request(server.url(bundle.name, fault: "reset,change", ["after": "100000", "times": "1"]))], events: { _ in })
        #expect(bench.cached(bundle) == bundle.bytes)
        let served = try server.served(bundle.name)
        #expect(served.requests == 2)
        #expect(served.bytes == 100_000 + bundle.bytes.count)
    }

    @Test func abandonsTricklingServerAndResumes() async throws {
        let (bundle, server) = try setUp("trickle.bin", size: 128 * 1024)
        let log = EventLog()
        _ = try await bench.fetcher().fetch(
            [bundle.request(server.url(bundle.name, fault: "trickle", ["rate": "4000", "times": "1"]))], events: log.record)
        #expect(bench.cached(bundle) == bundle.bytes)
        #expect(log.retries.count == 1)
        // The low-speed limit, not the server, ended the first attempt (the trickle alone would take 32 s).
        #expect(log.retries.first?.reason.contains("stalled") == true, "\(log.retries)")
        #expect(Double(try server.served(bundle.name).bytes) <= 1.1 * Double(bundle.size))
    }

    @Test func abandonsStalledServerAndRetries() async throws {
        let (bundle, server) = try setUp("stall.bin")
        let log = EventLog()
        _ = try await bench.fetcher().fetch(
            [bundle.request(server.url(bundle.name, fault: "stall", ["seconds": "30", "times": "1"]))], events: log.record)
        #expect(bench.cached(bundle) == bundle.bytes)
        #expect(log.retries.count == 1)
        // Abandoned by the low-speed limit long before the server's 30 s stall would end.
        #expect(log.retries.first?.reason.contains("stalled") == true, "\(log.retries)")
    }

    @Test(arguments: [503, 429])
    func honoursRetryAfter(status: Int) async throws {
        let (bundle, server) = try setUp("retry-after-\(status).bin")
        let log = EventLog()
        _ = try await bench.fetcher().fetch(
            [bundle.request(server.url(bundle.name, fault: "status", ["code": "\(status)", "retry-after": "1", "times": "1"]))], events: log.record)
        #expect(bench.cached(bundle) == bundle.bytes)
        let retry = try #require(log.retries.first)
        #expect(retry.delay == 1)
        #expect(retry.reason.contains("\(status)"))
    }

    @Test func failsAfterBoundedAttemptsWhenServerKeepsFailing() async throws {
        let (bundle, server) = try setUp("always-503.bin")
        let log = EventLog()
        let error = await #expect(throws: FetchError.self) {
            _ = try await bench.fetcher().fetch([bundle.request(server.url(bundle.name, fault: "status", ["code": "503"]))], events: log.record)
        }
        let failure = try #require(error)
        #expect(failure.reason == .httpStatus(503))
        #expect(failure.attempts == RetryPolicy.fast.maxAttempts)
        #expect(failure.httpStatus == 503)
        #expect(failure.description.contains(bundle.digest.description))
        #expect(failure.description.contains("europe/ch"))
        #expect(failure.description.contains("always-503.bin"))
        #expect(try server.served(bundle.name).requests == RetryPolicy.fast.maxAttempts)
        #expect(bench.cached(bundle) == nil)
    }

    @Test func failsFastOnNotFound() async throws {
        let (bundle, server) = try setUp("present.bin")
        let missing = FetchRequest(digest: bundle.digest, url: server.url("missing.bin"), size: bundle.size, regions: ["europe/ch"])
        let error = await #expect(throws: FetchError.self) {
            _ = try await bench.fetcher().fetch([missing], events: { _ in })
        }
        #expect(error?.reason == .httpStatus(404))
        #expect(error?.attempts == 1)
        #expect(!bench.partialExists(bundle))
    }

    @Test func retriesFlippedByteOnceFromZero() async throws {
        let (bundle, server) = try setUp("flip-once.bin")
        let log = EventLog()
        _ = try await bench.fetcher().fetch(
            [bundle.request(server.url(bundle.name, fault: "flip", ["at": "5000", "times": "1"]))], events: log.record)
        #expect(bench.cached(bundle) == bundle.bytes)
        #expect(log.retries.count == 1)
    }

    @Test func rejectsPersistentlyFlippedByte() async throws {
        let (bundle, server) = try setUp("flip.bin")
        let error = await #expect(throws: FetchError.self) {
            _ = try await bench.fetcher().fetch([bundle.request(server.url(bundle.name, fault: "flip", ["at": "5000"]))], events: { _ in })
        }
        guard case .digestMismatch? = error?.reason else {
            Issue.record("expected a digest mismatch, got \(String(describing: error))")
            return
        }
        #expect(try server.served(bundle.name).requests == 2)
        #expect(bench.cached(bundle) == nil)
        #expect(!bench.partialExists(bundle))
    }

    /// With a Content-Length the excess is seen before any byte is written; without one, mid-stream.
    @Test(arguments: ["extra", "extra,nolength"])
    func rejectsResponseLongerThanDeclared(fault: String) async throws {
        let (bundle, server) = try setUp("extra-\(fault.count).bin")
        let error = await #expect(throws: FetchError.self) {
            _ = try await bench.fetcher().fetch([bundle.request(server.url(bundle.name, fault: fault, ["extra": "1000"]))], events: { _ in })
        }
        guard case .tooLarge? = error?.reason else {
            Issue.record("expected tooLarge, got \(String(describing: error))")
            return
        }
        #expect(error?.attempts == 1)
        #expect(bench.cached(bundle) == nil)
        #expect(!bench.partialExists(bundle))
    }

    @Test func failsWithClearErrorWhenNothingListens() async throws {
        let bundle = try TestBundle(in: bench.served.path, name: "nobody.bin")
        let port = try { () throws -> Int in
            let server = try FaultServer(root: bench.served.path)
            defer { server.stop() }
            return server.port
        }()
        let url = URL(string: "http://127.0.0.1:\(port)/nobody.bin")!
        let log = EventLog()
        let error = await #expect(throws: FetchError.self) {
            _ = try await bench.fetcher().fetch([bundle.request(url)], events: log.record)
        }
        let failure = try #require(error)
        guard case .transport = failure.reason else {
            Issue.record("expected a transport error, got \(failure)")
            return
        }
        #expect(failure.attempts == RetryPolicy.fast.maxAttempts)
        #expect(failure.url == url)
        #expect(failure.description.contains(bundle.digest.description))
        #expect(log.retries.count == RetryPolicy.fast.maxAttempts - 1)
    }

    @Test func resumesPartialLeftByEarlierRun() async throws {
        let (bundle, server) = try setUp("earlier-run.bin")
        let partial = bench.cache.partialPath(for: bundle.digest)
        try FileSystem.makeDirectories((partial as NSString).deletingLastPathComponent)
        try bundle.bytes.prefix(100_000).write(to: URL(fileURLWithPath: partial))
        _ = try await bench.fetcher().fetch([bundle.request(server.url(bundle.name))], events: { _ in })
        #expect(bench.cached(bundle) == bundle.bytes)
        #expect(try server.served(bundle.name).bytes == bundle.bytes.count - 100_000)
    }

    @Test func cancellationKeepsPartialForResume() async throws {
        let (bundle, server) = try setUp("cancel.bin")
        let log = EventLog()
        let fetcher = bench.fetcher(policy: RetryPolicy(lowSpeedLimit: 1, lowSpeedTime: 30))
        // Slow enough (16 s for the bundle) that a loaded machine still cancels it mid-transfer.
        let slow = bundle.request(server.url(bundle.name, fault: "trickle", ["rate": "16000", "times": "1"]))
        let task = Task { try await fetcher.fetch([slow], events: log.record) }
        while log.progress < 3 { try await Task.sleep(for: .milliseconds(20)) }
        task.cancel()
        let result = await task.result
        guard case .failure(let error as FetchError) = result else {
            Issue.record("expected cancellation, got \(result)")
            return
        }
        #expect(error.reason == .cancelled)
        #expect(bench.partialExists(bundle))
        #expect(bench.cached(bundle) == nil)

        _ = try await fetcher.fetch([bundle.request(server.url(bundle.name))], events: { _ in })
        #expect(bench.cached(bundle) == bundle.bytes)
        #expect(Double(try server.served(bundle.name).bytes) <= 1.1 * Double(bundle.size))
    }
}
