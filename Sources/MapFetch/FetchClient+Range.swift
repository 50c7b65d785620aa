import Foundation
import MapFormat
import MapIO

/// How one ranged GET through `FetchClient` ended, when the server answered.
package enum RangeAnswer: Sendable, Equatable {
    /// `206` with `Content-Range: bytes a-b/total` for the range asked (or, at the end of the
    /// document, the part of it there is): all of `range` went to the sink.
    case partial(range: ClosedRange<Int64>, total: Int64, headers: [String: String])
    /// `200`: the server sent the whole document instead (it ignores Range, or `If-Range` no longer
    /// matches: the document changed). Stopped at the head; nothing went to the sink.
    case whole(headers: [String: String])
    /// No such document: HTTP 404 or 410.
    case missing(httpStatus: Int)
}

extension FetchClient {
    /// GETs bytes `range` of `url` (HTTP or HTTPS) once, handing them to `sink` in order; with
    /// `ifRange` (an ETag or a Last-Modified date) a changed document comes back as `.whole`. Only a
    /// `206` whose `Content-Range` is the range asked for reaches the sink: a `200` for a range is
    /// never read as the range. A transfer that breaks after some bytes throws, and the bytes the sink
    /// took are the range's first ones, so the caller asks for the rest.
    package func get(
        _ url: URL, range: ClosedRange<Int64>, ifRange: String? = nil, sink: @escaping (RawSpan) -> Bool
    ) throws(FetchFailure) -> RangeAnswer {
        var answered: ClosedRange<Int64>?
        var total: Int64 = 0
        var problem: String?
        var received: Int64 = 0
        var refused = false
        let requestHeaders = headers + (ifRange.map { ["If-Range: \($0)"] } ?? [])
        let outcome = CurlTransfer().get(
            url, range: range, headers: requestHeaders,
            head: { status, headers in
                guard status == 206 else { return false }
                let parsed = headers["content-range"].flatMap(Self.contentRange)
                guard let part = parsed?.range, let size = parsed?.total, part.lowerBound == range.lowerBound,
                    part.upperBound == range.upperBound || (part.upperBound < range.upperBound && part.upperBound == size - 1)
                else {
                    problem =
                        "the server answered Content-Range '\(headers["content-range"] ?? "")' for bytes \(range.lowerBound)-\(range.upperBound)"
                    return false
                }
                answered = part
                total = size
                return true
            }
        ) { chunk in
            received += Int64(chunk.byteCount)
            guard let answered, received <= Int64(answered.count) else {
                problem = "the server sent more than the bytes asked for"
                return false
            }
            refused = !sink(chunk)
            return !refused
        }
        let status = outcome.status
        if status == 404 || status == 410 { return .missing(httpStatus: status) }
        if status == 200 { return .whole(headers: outcome.headers) }
        if let problem { throw .transfer(url: url, httpStatus: status, reason: problem, transient: false) }
        if refused { throw .stopped(url: url) }
        if status != 206 {
            if status == 0, let error = outcome.error { throw .transfer(url: url, httpStatus: nil, reason: error, transient: true) }
            throw .status(url: url, httpStatus: status, retryAfter: RetryPolicy.retryAfterSeconds(outcome.headers["retry-after"]))
        }
        if let error = outcome.error { throw .transfer(url: url, httpStatus: status, reason: error, transient: true) }
        guard let answered, received == Int64(answered.count) else {
            throw .transfer(
                url: url, httpStatus: status, reason: "the answer ended after \(received) of \(range.count) bytes", transient: true)
        }
        return .partial(range: answered, total: total, headers: outcome.headers)
    }

    /// `bytes a-b/total` as the range and the total; nil for anything else (`*` totals included).
    static func contentRange(_ value: String) -> (range: ClosedRange<Int64>, total: Int64)? {
        let text = value.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let parts = text.dropFirst(6).split(separator: "/")
        guard parts.count == 2, let size = Int64(parts[1]) else { return nil }
        let bounds = parts[0].split(separator: "-")
        guard bounds.count == 2, let low = Int64(bounds[0]), let high = Int64(bounds[1]), low <= high, high < size else { return nil }
        return (low...high, size)
    }
}
