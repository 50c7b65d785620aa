import Foundation
import MapFormat
import MapIO

/// What an HTTP server said a document's version is (`ETag`, `Last-Modified`), kept to ask again
/// conditionally (`If-None-Match`, `If-Modified-Since`): an unchanged document then costs a `304`,
/// headers only.
package struct HTTPValidators: Codable, Equatable, Sendable {
    package var etag: String?
    package var lastModified: String?

    package init(etag: String?, lastModified: String?) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// The longest validator kept (bytes). A server's `ETag` is sent back on every later check: a
    /// 12,000-byte one made every request head larger than the 8 KiB many servers accept, and the
    /// check failed with 400 from then on (issue 41).
    package static let maxLength = 1024

    /// The validators of a response's (lowercased) headers that are safe to send back; nil when none is.
    init?(headers: [String: String]) {
        etag = headers["etag"].flatMap(Self.sendable)
        lastModified = headers["last-modified"].flatMap(Self.sendable)
        if etag == nil && lastModified == nil { return nil }
    }

    /// `value`, when it may go back into a request head: at most `maxLength` bytes and no control byte
    /// (a bare CR inside an `ETag` sent back verbatim is header injection).
    static func sendable(_ value: String) -> String? {
        guard value.utf8.count <= maxLength, !value.isEmpty else { return nil }
        return value.utf8.contains { $0 < 0x20 || $0 == 0x7F } ? nil : value
    }

    /// The request headers that ask for the document only when it changed; a validator kept before
    /// these rules (in a cache written by an older version) that breaks them is left out.
    var conditionalHeaders: [String] {
        var lines: [String] = []
        if let etag = etag.flatMap(Self.sendable) { lines.append("If-None-Match: \(etag)") }
        if let lastModified = lastModified.flatMap(Self.sendable) { lines.append("If-Modified-Since: \(lastModified)") }
        return lines
    }
}

/// Why a small document (catalog, signature, timestamp) could not be fetched.
package enum DocumentFetchError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The body is larger than the cap (for a decoded `Content-Encoding`, the decoded size).
    case tooLarge(url: URL, limit: Int)
    /// The transfer failed, or the server answered with an error status (not 404/410).
    case failed(url: URL, httpStatus: Int?, reason: String)

    /// The document asked for (messages show it as `URL.shown`).
    package var url: URL {
        switch self {
        case .tooLarge(let url, _), .failed(let url, _, _): url
        }
    }

    package var description: String {
        switch self {
        case .tooLarge(let url, let limit): "\(url.shown): larger than \(limit) bytes (decompressed); the server sends something else than a catalog"
        case .failed(let url, let status, let reason): "\(url.shown): \(status.map { "HTTP status \($0): " } ?? "")\(reason)"
        }
    }
}

/// One GET of a small document, conditional when validators are known: the one fetch the catalog,
/// its signature and its timestamp go through, on devices and build machines alike.
package enum DocumentFetch {
    /// What the server answered.
    package enum Response: Sendable {
        /// A body (decoded, at most the cap) and the validators to ask with next time.
        case body(Data, HTTPValidators?)
        /// `304 Not Modified`: the copy the validators came from is current.
        case notModified
        /// No such document (no file, HTTP 404 or 410).
        case missing
    }

    /// GETs `url` (`file://` is read) through `client`, at most `limit` bytes; with `validators`,
    /// conditionally. A failure `client.retry` finds worth another attempt (a timeout, a dropped
    /// connection, 408/429/5xx) is tried again after its delay (`Retry-After` honoured), as bundles are;
    /// the wait ends early when `stop` says so.
    package static func get(
        _ url: URL, limit: Int, validators: HTTPValidators? = nil, acceptEncoding: Bool = false, stop: (() -> Bool)? = nil,
        client: FetchClient = FetchClient(), received: ((_ bytes: Int64) -> Void)? = nil
    ) throws(DocumentFetchError) -> Response {
        var failures = 0
        while true {
            do throws(FetchFailure) {
                return try attempt(
                    url, limit: limit, validators: validators, acceptEncoding: acceptEncoding, stop: stop, client: client, received: received)
            } catch {
                failures += 1
                guard let delay = client.retryDelay(after: error, failures: failures) else { throw documentError(error) }
                if let retrying = client.retrying {
                    let reason =
                        switch error {
                        case .status(_, let status, _): "HTTP status \(status)"
                        case .transfer(_, let status, let reason, _): (status.map { "HTTP status \($0): " } ?? "") + reason
                        case .tooLarge, .stopped: "\(error)"
                        }
                    retrying(url, failures + 1, reason, delay)
                }
                // Waits in slices, so a stop (the caller's cancellation) ends it at once.
                let until = Date().addingTimeInterval(delay)
                while Date() < until {
                    if stop?() == true { throw documentError(error) }
                    Thread.sleep(forTimeInterval: min(0.1, max(0, until.timeIntervalSinceNow)))
                }
            }
        }
    }

    /// The document error for a client's failure.
    private static func documentError(_ error: FetchFailure) -> DocumentFetchError {
        switch error {
        case .tooLarge(let source, let limit): .tooLarge(url: source, limit: Int(limit))
        case .stopped(let source): .failed(url: source, httpStatus: nil, reason: "stopped: the caller was cancelled")
        case .status(let source, let status, _): .failed(url: source, httpStatus: status, reason: "expected 200 OK")
        case .transfer(let source, let status, let reason, _): .failed(url: source, httpStatus: status, reason: reason)
        }
    }

    /// One GET of `url`: the body, `304` or none, or the client's failure.
    private static func attempt(
        _ url: URL, limit: Int, validators: HTTPValidators?, acceptEncoding: Bool, stop: (() -> Bool)?, client: FetchClient,
        received: ((_ bytes: Int64) -> Void)?
    ) throws(FetchFailure) -> Response {
        // A file is read into one allocation of its size: appended chunk by chunk, an 8 MB catalog
        // was copied and faulted in again each time the buffer grew (~5 % of a planet plan).
        if url.isFileURL {
            do { return .body(try ReadableFile.contents(of: url.path, limit: limit), nil) } catch {
                if error.code == EFBIG { throw .tooLarge(url: url, limit: Int64(limit)) }
                if error.isNotFound { return .missing }
                throw .transfer(url: url, httpStatus: nil, reason: error.description, transient: false)
            }
        }
        var body = Data()
        let answer = try client.get(
            url, limit: Int64(limit), requestHeaders: validators?.conditionalHeaders ?? [], acceptEncoding: acceptEncoding, stop: stop
        ) { chunk in
            RawBytes.append(chunk, to: &body)
            received?(Int64(body.count))
            return true
        }
        switch answer {
        case .body(let headers): return .body(body, HTTPValidators(headers: headers))
        case .notModified: return .notModified
        case .missing: return .missing
        }
    }
}
