import Foundation
import MapFetch
import MapFormat
import MapIO
import Synchronization
import TestSupport

/// A bundle of random bytes written by a test, with its digest.
struct TestBundle {
    let name: String
    let bytes: Data
    let digest: BundleDigest
    var size: Int64 { Int64(bytes.count) }

    /// Writes `size` random bytes to `folder/name`.
    init(in folder: String, name: String, size: Int = 256 * 1024) throws {
        var generator = SystemRandomNumberGenerator()
        var bytes = Data(count: size)
        unsafe bytes.withUnsafeMutableBytes { raw in
            for i in stride(from: 0, to: size, by: 8) {
                var word = generator.next() as UInt64
                unsafe withUnsafeBytes(of: &word) {
                    unsafe raw.baseAddress!.advanced(by: i).copyMemory(from: $0.baseAddress!, byteCount: min(8, size - i))
                }
            }
        }
        self.name = name
        self.bytes = bytes
        self.digest = BundleDigest(hex: MapIO.SHA256.hex(bytes))
        try bytes.write(to: URL(fileURLWithPath: folder + "/" + name))
    }

    func request(_ url: URL, regions: [RegionID] = ["europe/ch"]) -> FetchRequest {
        FetchRequest(digest: digest, url: url, size: size, regions: regions)
    }
}

/// Every event a fetch reported, in order.
final class EventLog: Sendable {
    private let events = Mutex<[FetchEvent]>([])

    var record: @Sendable (FetchEvent) -> Void { { event in self.events.withLock { $0.append(event) } } }
    var all: [FetchEvent] { events.withLock { $0 } }

    var retries: [(reason: String, delay: Double)] {
        all.compactMap { if case .retry(_, _, let reason, let delay) = $0 { (reason, delay) } else { nil } }
    }
    var alreadyCached: Int { all.filter { if case .alreadyCached = $0 { true } else { false } }.count }
    var verified: Int { all.filter { if case .verified = $0 { true } else { false } }.count }
    var progress: Int { all.filter { if case .progress = $0 { true } else { false } }.count }
}

extension RetryPolicy {
    /// Small delays and a 1 s stall limit, so fault tests finish quickly.
    static let fast = RetryPolicy(
        maxAttempts: 4, baseDelay: 0.05, maxDelay: 0.2, maxRetryAfter: 3,
        lowSpeedLimit: 20_000, lowSpeedTime: 1, connectTimeout: 2, progressInterval: 0.1)
}

/// A served folder, a cache and what the cache holds.
struct FetchBench {
    let served = TemporaryFolder("served")
    let cacheFolder = TemporaryFolder("cache")
    var cache: DownloadCache { DownloadCache(root: cacheFolder.path) }

    func cached(_ bundle: TestBundle) -> Data? {
        FileManager.default.contents(atPath: cache.path(for: bundle.digest))
    }

    func partialExists(_ bundle: TestBundle) -> Bool {
        FileSystem.exists(cache.partialPath(for: bundle.digest))
    }

    func fetcher(jobs: Int = 2, policy: RetryPolicy = .fast) -> BundleFetcher {
        BundleFetcher(cache: cache, jobs: jobs, policy: policy)
    }
}
