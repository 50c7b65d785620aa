import Foundation

/// What one transfer asks of libcurl.
package struct CurlRequest: Sendable {
    /// `file://`, `http://` or `https://`.
    package var url: URL
    /// First byte wanted; above 0 sends `Range: bytes=N-` (`CURLOPT_RANGE`).
    package var rangeStart: Int64 = 0
    /// Last byte wanted (inclusive); with it the request is `Range: bytes=rangeStart-rangeEnd`, even from 0.
    package var rangeEnd: Int64?
    /// Several ranges (inclusive, disjoint) in one request, `Range: bytes=a-b,c-d,…`; the answer is
    /// `multipart/byteranges` (see `MultiRangeReceiver`). Takes the place of `rangeStart`/`rangeEnd`.
    package var ranges: [ClosedRange<Int64>]?
    /// An ETag or Last-Modified date sent as `If-Range` with a range, so a changed file comes back whole.
    package var ifRange: String?
    /// Below this many bytes per second for `lowSpeedTime` seconds the transfer is abandoned (`CURLOPT_LOW_SPEED_LIMIT`).
    package var lowSpeedLimit: Int = 1024
    /// Seconds of slow transfer tolerated (`CURLOPT_LOW_SPEED_TIME`); also bounds a stall before the first byte.
    package var lowSpeedTime: Int = 30
    /// Seconds allowed to connect (`CURLOPT_CONNECTTIMEOUT`).
    package var connectTimeout: Int = 30
    /// A PEM file of certificates to trust instead of the system's (`CURLOPT_CAINFO`); nil for the system's.
    package var trustedCertificates: String?
    /// Extra request header lines (`Name: value`), e.g. a remote cache's authorization.
    package var headers: [String] = []

    /// A request for `url` from byte `rangeStart`.
    package init(url: URL, rangeStart: Int64 = 0, ifRange: String? = nil) {
        self.url = url
        self.rangeStart = rangeStart
        self.ifRange = ifRange
    }
}

/// A response's status and headers, as known when its first body byte arrives.
package struct CurlResponseHead: Sendable {
    /// HTTP status of the final response (after redirects); 0 for `file://` or when nothing came back.
    package let status: Int
    /// Header fields of the final response, names lower-cased; a repeated name keeps its last value.
    package let headers: [String: String]
}

/// Takes a transfer's response on the transfer thread, one call at a time; returning false stops the transfer.
package protocol CurlReceiver: AnyObject, Sendable {
    /// The response head, once, before the first body byte.
    func receive(head: CurlResponseHead) -> Bool
    /// The next piece of the body; only valid during the call.
    func receive(body: RawSpan) -> Bool
}

/// How a transfer ended.
package struct CurlOutcome: Sendable {
    /// The ways a transfer ends.
    package enum Ending: Sendable, Equatable {
        /// libcurl finished the transfer (`CURLE_OK`); the status says whether the server was happy.
        case completed
        /// The receiver returned false.
        case stoppedByReceiver
        /// The caller's task was cancelled.
        case cancelled
        /// Too slow, stalled or could not connect in time (`CURLE_OPERATION_TIMEDOUT`).
        case timedOut(String)
        /// Any other libcurl failure; `permanent` when trying again cannot help (bad URL, missing file, unsupported protocol).
        case failed(String, permanent: Bool)
    }
    /// How it ended.
    package let ending: Ending
    /// The final response's status and headers (status 0 and no headers when none arrived).
    package let head: CurlResponseHead
}
