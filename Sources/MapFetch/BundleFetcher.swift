import Foundation
import MapFormat
import MapIO

/// Fetches bundles into the download cache, verifying each byte against its digest while it streams.
///
/// Up to `jobs` bundles transfer at once over one libcurl multi handle (shared connections, HTTP/2 when
/// offered). Interrupted transfers resume from their partial file; failures are retried per `policy`.
package struct BundleFetcher: Sendable {
    /// Where verified bundles go.
    package let cache: DownloadCache
    /// Transfers in flight at once.
    package let jobs: Int
    /// Attempts, backoff and stall detection.
    package let policy: RetryPolicy
    /// A PEM file of certificates to trust for `https://` instead of the system's (a private mirror); nil for the system's.
    package let trustedCertificates: String?

    /// A fetcher over `cache` with `jobs` parallel transfers, retrying per `policy`.
    package init(cache: DownloadCache, jobs: Int, policy: RetryPolicy = .standard, trustedCertificates: String? = nil) {
        self.cache = cache
        self.jobs = max(1, jobs)
        self.policy = policy
        self.trustedCertificates = trustedCertificates
    }

    /// A sensible default for `jobs`: enough parallel transfers to hide latency, not so many that a CDN throttles.
    package static var defaultJobs: Int { min(16, max(8, ProcessInfo.processInfo.activeProcessorCount * 4)) }

    /// Makes sure every requested bundle is verified in the cache; returns each bundle's cache path.
    ///
    /// Throws the first bundle's failure (after cancelling the other transfers, whose partial files stay for
    /// a later run), or `.cancelled` when the calling task is cancelled.
    package func fetch(_ requests: [FetchRequest], events: @escaping @Sendable (FetchEvent) -> Void) async throws(FetchError) -> [BundleDigest:
        String]
    {
        try await fetch(requests, keepingPaths: true, events: events)
    }

    /// As `fetch(_:events:)`, and the result holds the paths only with `keepingPaths`: a build,
    /// which finds each bundle at `cache.path(for:)`, kept 1.4 MiB of paths at 6 796 bundles.
    func fetch(_ requests: [FetchRequest], keepingPaths: Bool, events: @escaping @Sendable (FetchEvent) -> Void) async throws(FetchError)
        -> [BundleDigest: String]
    {
        var paths: [BundleDigest: String] = [:]
        var wanted: [FetchRequest] = []
        for request in Self.merged(requests) {
            if cache.contains(request.digest) {
                events(.alreadyCached(request.digest, size: request.size))
                if keepingPaths { paths[request.digest] = cache.path(for: request.digest) }
            } else {
                wanted.append(request)
            }
        }
        if wanted.isEmpty { return paths }

        // Each transfer thread also writes and hashes what it receives; with many bundles and
        // several cores, two threads keep one from being the pipeline's bottleneck.
        let engineCount = wanted.count >= 64 && jobs >= 4 && ProcessInfo.processInfo.activeProcessorCount >= 2 ? 2 : 1
        let engines = (0..<engineCount).map { index in CurlMulti(connectionsPerHost: (jobs + engineCount - 1 - index) / engineCount) }
        defer { for engine in engines { engine.shutdown() } }
        let failure = await withTaskGroup(of: Result<BundleDigest, FetchError>.self) { group -> FetchError? in
            var queue = wanted.makeIterator()
            var started = 0
            func startNext() {
                guard let request = queue.next() else { return }
                let engine = engines[started % engines.count]
                started += 1
                let download = BundleDownload(
                    request: request, cache: cache, policy: policy, trustedCertificates: trustedCertificates, engine: engine, events: events)
                group.addTask {
                    do throws(FetchError) {
                        try await download.run()
                        return .success(request.digest)
                    } catch { return .failure(error) }
                }
            }
            for _ in 0..<jobs { startNext() }
            var failure: FetchError?
            while let result = await group.next() {
                switch result {
                case .success(let digest):
                    if keepingPaths { paths[digest] = cache.path(for: digest) }
                    if failure == nil { startNext() }
                case .failure(let error):
                    // Keep the first real failure; the cancellations it causes in the others are not news.
                    if failure == nil || (failure?.reason == .cancelled && error.reason != .cancelled) { failure = error }
                    group.cancelAll()
                }
            }
            return failure
        }
        if let failure { throw failure }
        return paths
    }

    /// One request per digest; a bundle wanted by several regions names them all.
    static func merged(_ requests: [FetchRequest]) -> [FetchRequest] {
        // Usually one request per digest already (a build's plan): nothing to merge, nothing to copy.
        var seen = Set<BundleDigest>(minimumCapacity: requests.count)
        if requests.allSatisfy({ seen.insert($0.digest).inserted }) { return requests }
        var order: [BundleDigest] = []
        var byDigest: [BundleDigest: FetchRequest] = [:]
        for request in requests {
            if let seen = byDigest[request.digest] {
                let regions = seen.regions + request.regions.filter { !seen.regions.contains($0) }
                byDigest[request.digest] = FetchRequest(digest: seen.digest, url: seen.url, size: seen.size, regions: regions)
            } else {
                order.append(request.digest)
                byDigest[request.digest] = request
            }
        }
        return order.map { byDigest[$0]! }
    }
}
