import Foundation
import MapFormat
import MapIO

/// One bundle's way into the cache: take its lock, resume or start its partial file, run attempts with
/// backoff until the bytes are complete and verified, then admit them.
struct BundleDownload: Sendable {
    let request: FetchRequest
    let cache: DownloadCache
    let policy: RetryPolicy
    let trustedCertificates: String?
    let engine: CurlMulti
    let events: @Sendable (FetchEvent) -> Void

    private func error(_ reason: FetchError.Reason, attempts: Int, status: Int? = nil) -> FetchError {
        FetchError(bundle: request.digest, url: request.url, regions: request.regions, reason: reason, attempts: attempts, httpStatus: status)
    }

    /// Fetches and verifies the bundle, or throws why not (`.cancelled` keeps the partial file for later).
    func run() async throws(FetchError) {
        let lock = try await acquireLock()
        defer { withExtendedLifetime(lock) {} }
        if cache.contains(request.digest) {
            events(.alreadyCached(request.digest, size: request.size))
            return
        }
        events(.started(request.digest, size: request.size))
        let partial = PartialDownload(request: request, cache: cache, progressInterval: policy.progressInterval, events: events)
        do throws(FetchError) {
            try await blocking { () throws(FileError) in try partial.open() }
            try await attempts(partial)
            events(.verified(request.digest, size: request.size))
        } catch {
            if error.reason != .cancelled {
                // An empty partial file helps no later run.
                if partial.length == 0 { _ = await BlockingPool.value { partial.remove() } }
                events(.failed(request.digest, reason: error.description))
            }
            throw error
        }
    }

    /// Waits (cancellably, `FileLock.acquire`) for any other fetcher writing this bundle's partial file to finish.
    private func acquireLock() async throws(FetchError) -> FileLock {
        let path = cache.lockPath(for: request.digest)
        let lock: FileLock?
        do throws(FileError) {
            try cache.ensureFolder(FileSystem.parent(path))
            lock = try await FileLock.acquire(path, pollEvery: .milliseconds(50))
        } catch {
            throw self.error(.local(error), attempts: 0)
        }
        guard let lock else { throw self.error(.cancelled, attempts: 0) }
        return lock
    }

    /// Runs file work off the cooperative pool, on a `BlockingPool` thread, when it may block for
    /// long (a durable cache's fsyncs); a build's cache does only quick opens and renames, which run
    /// in place: two thread hops per bundle cost more than the calls themselves.
    private func blocking(_ body: @escaping @Sendable () throws(FileError) -> Void, attempts: Int = 0) async throws(FetchError) {
        if !cache.durable {
            do throws(FileError) { try body() } catch { throw self.error(.local(error), attempts: attempts) }
            return
        }
        let result = await BlockingPool.value { () -> FileError? in
            do throws(FileError) {
                try body()
                return nil
            } catch { return error }
        }
        if let result { throw error(.local(result), attempts: attempts) }
    }

    private func attempts(_ partial: PartialDownload) async throws(FetchError) {
        var attempts = 0
        var failuresInARow = 0
        // Progress means more bytes than ever before in this run, so a server that keeps sending the same
        // prefix (and is then restarted from zero) cannot keep the loop going for ever.
        var longest: Int64 = partial.length
        var restartedAfterMismatch = false
        var lastStatus: Int?

        func stop(_ reason: FetchError.Reason) -> FetchError { error(reason, attempts: attempts, status: lastStatus) }
        func keepPartialAndCancel() async -> FetchError {
            _ = await BlockingPool.value { try? partial.close(sync: false) }
            return stop(.cancelled)
        }

        while true {
            if Task.isCancelled { throw await keepPartialAndCancel() }
            if partial.length < request.size {
                attempts += 1
                partial.beginAttempt()
                var curlRequest = CurlRequest(url: request.url, rangeStart: partial.length, ifRange: partial.length > 0 ? partial.validator : nil)
                curlRequest.lowSpeedLimit = policy.lowSpeedLimit
                curlRequest.lowSpeedTime = policy.lowSpeedTime
                curlRequest.connectTimeout = policy.connectTimeout
                curlRequest.trustedCertificates = trustedCertificates
                curlRequest.headers = request.headers
                let outcome = await engine.perform(curlRequest, receiver: partial)
                if outcome.head.status > 0 { lastStatus = outcome.head.status }

                // Decide what this attempt means: done, try again (after how long, from where), or give up.
                var retryReason: FetchError.Reason?
                var retryAfter: Double?
                switch partial.refusal {
                case .tooLarge(let received)?:
                    _ = await BlockingPool.value { partial.remove() }
                    throw stop(.tooLarge(received: received))
                case .write(let failure)?:
                    throw stop(.local(failure))
                case .unexpectedRange(let message)?:
                    try await blocking({ () throws(FileError) in try partial.discard() }, attempts: attempts)
                    retryReason = .transport("server answered a resume with \(message)")
                case .status(let status)?:
                    (retryReason, retryAfter) = try classify(status: status, headers: outcome.head.headers, partial: partial, attempts: attempts)
                case nil:
                    switch outcome.ending {
                    case .cancelled:
                        throw await keepPartialAndCancel()
                    case .timedOut(let message):
                        retryReason = .stalled(message)
                    case .failed(let message, let permanent):
                        if permanent { throw stop(.transport(message)) }
                        retryReason = .transport(message)
                    case .completed, .stoppedByReceiver:
                        let status = outcome.head.status
                        if status >= 300 {
                            (retryReason, retryAfter) = try classify(
                                status: status, headers: outcome.head.headers, partial: partial, attempts: attempts)
                        } else if partial.length < request.size {
                            // A local file that ends early is that long; reading it again cannot help.
                            if request.url.isFileURL { throw stop(.truncated(received: partial.length)) }
                            retryReason = .truncated(received: partial.length)
                        }
                    }
                }
                if let retryReason {
                    let progressed = partial.length > longest
                    longest = max(longest, partial.length)
                    failuresInARow = progressed ? 1 : failuresInARow + 1
                    if failuresInARow >= policy.maxAttempts && !progressed { throw stop(retryReason) }
                    let delay = policy.delay(afterFailure: failuresInARow, retryAfter: retryAfter)
                    events(.retry(request.digest, attempt: attempts + 1, reason: stop(retryReason).whatFailed, delaySeconds: delay))
                    do { try await Task.sleep(for: .seconds(delay)) } catch { throw await keepPartialAndCancel() }
                    continue
                }
            }

            // All declared bytes are here: they enter the cache only if their digest matches.
            let actual = partial.finishedDigest()
            if actual == request.digest.sha256 {
                try await blocking(
                    { () throws(FileError) in
                        // admit() flushes a durable cache's file itself; one fsync is enough.
                        try partial.close(sync: false)
                        try cache.admit(verifiedFile: partial.path, digest: request.digest)
                        partial.removeMeta()
                        // Safe while held: whoever waits on the old lock file finds the bundle cached and writes nothing.
                        try? FileSystem.removeFile(cache.lockPath(for: request.digest))
                    }, attempts: attempts)
                return
            }
            try await blocking({ () throws(FileError) in try partial.discard() }, attempts: attempts)
            if restartedAfterMismatch {
                _ = await BlockingPool.value { partial.remove() }
                throw stop(.digestMismatch(actual: actual))
            }
            restartedAfterMismatch = true
            events(
                .retry(
                    request.digest, attempt: attempts + 1,
                    reason: "content did not match its digest (got sha256:\(actual)); downloading again from zero", delaySeconds: 0))
        }
    }

    /// What an error status means for the next attempt: a reason to retry (and the server's wait), or a thrown failure.
    private func classify(status: Int, headers: [String: String], partial: PartialDownload, attempts: Int) throws(FetchError) -> (
        FetchError.Reason?, Double?
    ) {
        if status == 416 {
            // The partial file does not fit the server's file (it changed or shrank): start over.
            do throws(FileError) { try partial.discard() } catch { throw self.error(.local(error), attempts: attempts, status: status) }
            return (.httpStatus(status), 0)
        }
        if RetryPolicy.isRetryable(status: status) {
            return (.httpStatus(status), RetryPolicy.retryAfterSeconds(headers["retry-after"]))
        }
        throw error(.httpStatus(status), attempts: attempts, status: status)
    }
}
