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

    /// The validators of a response's (lowercased) headers; nil when it has none.
    init?(headers: [String: String]) {
        etag = headers["etag"]
        lastModified = headers["last-modified"]
        if etag == nil && lastModified == nil { return nil }
    }

    /// The request headers that ask for the document only when it changed.
    var conditionalHeaders: [String] {
        var lines: [String] = []
        if let etag { lines.append("If-None-Match: \(etag)") }
        if let lastModified { lines.append("If-Modified-Since: \(lastModified)") }
        return lines
    }
}

/// Why a small document (catalog, signature, timestamp) could not be fetched.
package enum DocumentFetchError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The body is larger than the cap (for a decoded `Content-Encoding`, the decoded size).
    case tooLarge(url: String, limit: Int)
    /// The transfer failed, or the server answered with an error status (not 404/410).
    case failed(url: String, httpStatus: Int?, reason: String)

    package var url: String {
        switch self {
        case .tooLarge(let url, _), .failed(let url, _, _): url
        }
    }

    package var description: String {
        switch self {
        case .tooLarge(let url, let limit): "\(url): larger than \(limit) bytes (decompressed); the server sends something else than a catalog"
        case .failed(let url, let status, let reason): "\(url): \(status.map { "HTTP status \($0): " } ?? "")\(reason)"
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

    /// GETs `url` (`file://` is read) through `client`, at most `limit` bytes; with `validators`, conditionally.
    package static func get(
        _ url: URL, limit: Int, validators: HTTPValidators? = nil, acceptEncoding: Bool = false, stop: (() -> Bool)? = nil,
        client: FetchClient = FetchClient()
    ) throws(DocumentFetchError) -> Response {
        // A file is read into one allocation of its size: appended chunk by chunk, an 8 MB catalog
        // was copied and faulted in again each time the buffer grew (~5 % of a planet plan).
        if url.isFileURL {
            do { return .body(try ReadableFile.contents(of: url.path, limit: limit), nil) } catch {
                if error.code == EFBIG { throw .tooLarge(url: url.path, limit: limit) }
                if error.isNotFound { return .missing }
                throw .failed(url: url.path, httpStatus: nil, reason: error.description)
            }
        }
        var body = Data()
        do {
            let answer = try client.get(
                url, limit: Int64(limit), requestHeaders: validators?.conditionalHeaders ?? [], acceptEncoding: acceptEncoding, stop: stop
            ) { chunk in
                RawBytes.append(chunk, to: &body)
                return true
            }
            switch answer {
            case .body(let headers): return .body(body, HTTPValidators(headers: headers))
            case .notModified: return .notModified
            case .missing: return .missing
            }
        } catch {
            switch error {
            case .tooLarge(let source, let limit): throw .tooLarge(url: source, limit: Int(limit))
            case .stopped(let source): throw .failed(url: source, httpStatus: nil, reason: "stopped: the caller was cancelled")
            case .status(let source, let status, _): throw .failed(url: source, httpStatus: status, reason: "expected 200 OK")
            case .transfer(let source, let status, let reason, _): throw .failed(url: source, httpStatus: status, reason: reason)
            }
        }
    }
}
