import Foundation
import MapFormat
import MapIO

/// A shared bundle cache speaking the plain HTTP content-addressed protocol of Bazel's remote
/// caches: `GET`/`PUT {base}/cas/{sha256-hex}`. Works with bazel-remote, nginx with WebDAV, or an
/// object store behind such a front. Bytes from it are verified exactly like bytes from the origin.
package struct RemoteCache: Sendable {
    /// The cache's base URL.
    package let base: URL
    /// Extra header lines (authorization); never printed.
    package let headers: [String]
    /// When true, never upload (untrusted runners).
    package let readOnly: Bool

    package init(base: URL, headers: [String] = [], readOnly: Bool = false) {
        self.base = base
        self.headers = headers
        self.readOnly = readOnly
    }

    /// `{base}/cas/{hex}`, keeping any query the base URL carries.
    package func url(for digest: BundleDigest) -> URL {
        var components = URLComponents(url: base, resolvingAgainstBaseURL: true)!
        let path = components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path
        components.path = path + "/cas/" + digest.hex
        return components.url!
    }

    /// The base URL without credentials, for messages.
    package var displayURL: String {
        var components = URLComponents(url: base, resolvingAgainstBaseURL: true)!
        components.user = nil
        components.password = nil
        components.query = nil
        return components.url?.absoluteString ?? "remote cache"
    }

    /// Uploads a verified bundle; nil on success, else why not (best effort, never fatal).
    package func upload(_ digest: BundleDigest, file: String, size: Int64) -> String? {
        let outcome = CurlTransfer().put(url(for: digest), file: file, size: size, headers: headers)
        if let error = outcome.error { return error }
        return (200..<300).contains(outcome.status) ? nil : "HTTP status \(outcome.status)"
    }
}

/// What happened at the remote cache.
package enum RemoteCacheEvent: Sendable {
    case hit(BundleDigest, size: Int64)
    case miss(BundleDigest, reason: String)
    /// The remote held bytes that do not match the digest: a poisoned or corrupted entry.
    case rejected(BundleDigest, url: String, reason: String)
    case uploaded(BundleDigest, size: Int64)
    case uploadFailed(BundleDigest, reason: String)
}

extension BundleFetcher {
    /// Fetches through the lookup order local cache → remote cache → origin. Remote failures of
    /// any kind (missing, down, 5xx, wrong bytes) fall back to the origin; bundles fetched from
    /// the origin are uploaded afterwards unless the remote is read-only.
    package func fetch(
        _ requests: [FetchRequest], remote: RemoteCache?, events: @escaping @Sendable (FetchEvent) -> Void,
        remoteEvents: @escaping @Sendable (RemoteCacheEvent) -> Void
    ) async throws(FetchError) -> [BundleDigest: String] {
        try await fetch(requests, remote: remote, keepingPaths: true, events: events, remoteEvents: remoteEvents)
    }

    /// As `fetch(_:remote:events:remoteEvents:)` without collecting the paths (each bundle is at
    /// `cache.path(for:)`), for a build, which holds all its requests at once.
    package func fill(
        _ requests: [FetchRequest], remote: RemoteCache?, events: @escaping @Sendable (FetchEvent) -> Void,
        remoteEvents: @escaping @Sendable (RemoteCacheEvent) -> Void
    ) async throws(FetchError) {
        _ = try await fetch(requests, remote: remote, keepingPaths: false, events: events, remoteEvents: remoteEvents)
    }

    private func fetch(
        _ requests: [FetchRequest], remote: RemoteCache?, keepingPaths: Bool, events: @escaping @Sendable (FetchEvent) -> Void,
        remoteEvents: @escaping @Sendable (RemoteCacheEvent) -> Void
    ) async throws(FetchError) -> [BundleDigest: String] {
        guard let remote else { return try await fetch(requests, keepingPaths: keepingPaths, events: events) }
        var paths: [BundleDigest: String] = [:]
        var missing: [FetchRequest] = []
        for request in requests {
            if cache.contains(request.digest) {
                events(.alreadyCached(request.digest, size: request.size))
                if keepingPaths { paths[request.digest] = cache.path(for: request.digest) }
            } else {
                missing.append(request)
            }
        }
        // One attempt per bundle at the remote: it is a shortcut, not the source of truth.
        let remoteFetcher = BundleFetcher(
            cache: cache, jobs: jobs, policy: RetryPolicy(maxAttempts: 1, baseDelay: 0, maxDelay: 0, lowSpeedTime: 10, connectTimeout: 5))
        let fromRemote: [(FetchRequest, Bool)] = await withTaskGroup(of: (FetchRequest, Bool).self) { group in
            var results: [(FetchRequest, Bool)] = []
            var next = 0
            func start(_ request: FetchRequest) {
                group.addTask {
                    let remoteRequest = FetchRequest(
                        digest: request.digest, url: remote.url(for: request.digest), size: request.size,
                        regions: request.regions, headers: remote.headers)
                    do throws(FetchError) {
                        _ = try await remoteFetcher.fetch(
                            [remoteRequest],
                            events: { event in
                                if case .verified = event { events(event) }
                            })
                        remoteEvents(.hit(request.digest, size: request.size))
                        return (request, true)
                    } catch {
                        if case .digestMismatch = error.reason {
                            remoteEvents(.rejected(request.digest, url: remote.displayURL + "/cas/" + request.digest.hex, reason: error.whatFailed))
                        } else {
                            remoteEvents(.miss(request.digest, reason: error.whatFailed))
                        }
                        return (request, false)
                    }
                }
            }
            while next < min(jobs, missing.count) {
                start(missing[next])
                next += 1
            }
            while let result = await group.next() {
                results.append(result)
                if next < missing.count {
                    start(missing[next])
                    next += 1
                }
            }
            return results
        }
        var toOrigin: [FetchRequest] = []
        for (request, hit) in fromRemote {
            if !hit {
                toOrigin.append(request)
            } else if keepingPaths {
                paths[request.digest] = cache.path(for: request.digest)
            }
        }
        if Task.isCancelled, let first = requests.first {
            throw FetchError(bundle: first.digest, url: first.url, regions: first.regions, reason: .cancelled, attempts: 0)
        }
        let fetched = try await fetch(toOrigin, keepingPaths: keepingPaths, events: events)
        paths.merge(fetched) { first, _ in first }
        if !remote.readOnly {
            let cache = self.cache
            await withTaskGroup(of: Void.self) { group in
                for request in toOrigin {
                    group.addTask {
                        let path = cache.path(for: request.digest)
                        if let failure = await BlockingPool.value({ remote.upload(request.digest, file: path, size: request.size) }) {
                            remoteEvents(.uploadFailed(request.digest, reason: failure))
                        } else {
                            remoteEvents(.uploaded(request.digest, size: request.size))
                        }
                    }
                }
            }
        }
        return paths
    }
}
