import Foundation
import MapFormat
import MapIO

/// How one GET through `FetchClient` ended, when the server (or the file system) answered.
package enum FetchAnswer: Sendable, Equatable {
    /// The whole body went to the sink, with the final response's headers (names lowercased; none for `file://`).
    case body(headers: [String: String])
    /// `304 Not Modified`: asked conditionally, the copy the caller holds is current.
    case notModified
    /// No such document: no file, or HTTP 404 or 410.
    case missing(httpStatus: Int?)
}

/// Why one GET through `FetchClient` failed.
package enum FetchFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The body is larger than the cap (for a decoded `Content-Encoding`, the decoded size).
    case tooLarge(url: URL, limit: Int64)
    /// The server answered an error status (not 404/410); `retryAfter` is its `Retry-After`, in seconds.
    case status(url: URL, httpStatus: Int, retryAfter: Double?)
    /// The transfer failed (no connection, a timeout, a file that cannot be read); `transient` when
    /// another attempt can help.
    case transfer(url: URL, httpStatus: Int?, reason: String, transient: Bool)
    /// The caller stopped it: its `stop` said so, or its sink refused a chunk.
    case stopped(url: URL)

    /// The URL asked for (messages show it as `URL.shown`: a file's path, any other URL whole).
    package var url: URL {
        switch self {
        case .tooLarge(let url, _), .status(let url, _, _), .transfer(let url, _, _, _), .stopped(let url): url
        }
    }

    /// The HTTP status, when a server answered.
    package var httpStatus: Int? {
        switch self {
        case .status(_, let status, _): status
        case .transfer(_, let status, _, _): status
        case .tooLarge, .stopped: nil
        }
    }

    /// True when another attempt can help: throttling, a server error, a timeout or a dropped
    /// connection (`RetryPolicy.isRetryable(status:)`); never a refusal (a 4xx, a body over the cap).
    package var isTransient: Bool {
        switch self {
        case .status(_, let status, _): RetryPolicy.isRetryable(status: status)
        case .transfer(_, _, _, let transient): transient
        case .tooLarge, .stopped: false
        }
    }

    /// What the server asked the client to wait, in seconds.
    package var retryAfter: Double? {
        if case .status(_, _, let seconds) = self { return seconds }
        return nil
    }

    package var description: String {
        switch self {
        case .tooLarge(let url, let limit): "\(url.shown): larger than \(limit) bytes"
        case .status(let url, let status, _): "\(url.shown): HTTP status \(status)"
        case .transfer(let url, let status, let reason, _): "\(url.shown): \(status.map { "HTTP status \($0): " } ?? "")\(reason)"
        case .stopped(let url): "\(url.shown): stopped"
        }
    }
}

/// The one client for single GETs over `file://` or HTTP(S): a catalog, its signature and timestamp
/// (`DocumentFetch`), a bundle fetched again by `repair()`. Each GET streams its body to a sink and is
/// capped in size; the request headers every GET carries (credentials) are set here, in one place; and
/// `retryDelay(after:failures:)` says, from the `RetryPolicy`, whether and when a failure is worth
/// another attempt, so a caller that holds a lock can let it go before it waits.
///
/// Bundles of a build or a download go through `BundleFetcher` (libcurl multi, resumable). A new
/// download source (a mirror list, a signed S3 URL) is taught here: the URLs and headers a GET uses.
package struct FetchClient: Sendable {
    /// Which failures are tried again, and how long to wait between attempts.
    package var retry: RetryPolicy
    /// Header lines (`Name: value`) every request carries, e.g. `Authorization: Bearer …`.
    package var headers: [String]
    /// Told before each wait for another attempt (a document's, `DocumentFetch.get`): the URL, the
    /// attempt that follows, why the last one failed and the seconds it waits, for a line that says
    /// so (a `Retry-After: 120` is otherwise two silent minutes).
    package var retrying: (@Sendable (_ url: URL, _ attempt: Int, _ reason: String, _ seconds: Double) -> Void)?

    /// A client; by default one attempt and no extra headers.
    package init(retry: RetryPolicy = .once, headers: [String] = []) {
        self.retry = retry
        self.headers = headers
    }

    /// GETs `url` once (`file://` is read), handing the body to `sink` in pieces (return false to stop)
    /// and refusing more than `limit` bytes; `requestHeaders` are added to the client's. With
    /// `acceptEncoding`, libcurl's encodings are offered and the cap counts decoded bytes. `stop` is
    /// asked during the transfer, also while the server sends nothing.
    package func get(
        _ url: URL, limit: Int64, requestHeaders: [String] = [], acceptEncoding: Bool = false, stop: (() -> Bool)? = nil,
        sink: @escaping (RawSpan) -> Bool
    ) throws(FetchFailure) -> FetchAnswer {
        var received: Int64 = 0
        var tooLarge = false
        var refused = false
        let take = { (chunk: RawSpan) -> Bool in
            received += Int64(chunk.byteCount)
            tooLarge = received > limit
            refused = !tooLarge && !sink(chunk)
            return !tooLarge && !refused
        }
        if url.isFileURL { return try read(url, limit: limit, take: take, tooLarge: { tooLarge }, refused: { refused }) }
        let outcome = CurlTransfer().get(url, headers: headers + requestHeaders, acceptEncoding: acceptEncoding, stop: stop) { chunk in
            take(chunk)
        }
        if tooLarge { throw .tooLarge(url: url, limit: limit) }
        if outcome.stopped || refused { throw .stopped(url: url) }
        let status = outcome.status == 0 ? nil : outcome.status
        if outcome.status == 304, !requestHeaders.isEmpty { return .notModified }
        if outcome.status == 404 || outcome.status == 410 { return .missing(httpStatus: outcome.status) }
        if let error = outcome.error {
            // A status the server sent before the transfer broke says more than libcurl's message.
            if let status, status != 200 { throw .status(url: url, httpStatus: status, retryAfter: retryAfter(outcome)) }
            throw .transfer(url: url, httpStatus: status, reason: error, transient: true)
        }
        guard outcome.status == 200 else {
            throw .status(url: url, httpStatus: outcome.status, retryAfter: retryAfter(outcome))
        }
        return .body(headers: outcome.headers)
    }

    /// Seconds to wait before attempt `failures + 1` after `failure`; nil when it is not worth one:
    /// not transient, or the policy's attempts are spent. Honours `Retry-After` (up to the policy's cap).
    package func retryDelay(after failure: FetchFailure, failures: Int) -> Double? {
        guard failure.isTransient, failures < retry.maxAttempts else { return nil }
        return retry.delay(afterFailure: failures, retryAfter: failure.retryAfter)
    }

    /// The `Retry-After` of a response, in seconds.
    private func retryAfter(_ outcome: CurlTransfer.Outcome) -> Double? {
        RetryPolicy.retryAfterSeconds(outcome.headers["retry-after"])
    }

    /// Reads the file `url` names through `take`.
    private func read(
        _ url: URL, limit: Int64, take: (RawSpan) -> Bool, tooLarge: () -> Bool, refused: () -> Bool
    ) throws(FetchFailure) -> FetchAnswer {
        /// Ends the walk of the file's chunks when `take` says stop.
        struct Stop: Error {}
        do {
            let file = try ReadableFile(path: url.path)
            try unsafe file.forEachChunk { chunk in if unsafe !take(chunk.bytes) { throw Stop() } }
        } catch {
            if tooLarge() { throw .tooLarge(url: url, limit: limit) }
            if refused() { throw .stopped(url: url) }
            if error.isNotFound { return .missing(httpStatus: nil) }
            throw .transfer(url: url, httpStatus: nil, reason: error.description, transient: false)
        }
        return .body(headers: [:])
    }
}

extension RetryPolicy {
    /// One attempt, no retries.
    package static let once = RetryPolicy(maxAttempts: 1)
}
