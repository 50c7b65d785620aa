import Foundation
import MapFormat
import MapIO

/// One bundle to fetch: where from, how big, and which regions want it (for messages).
package struct FetchRequest: Sendable, Equatable {
    package let digest: BundleDigest
    /// The absolute URL's text. A build holds one request per bundle for its whole download, and a
    /// parsed `URL` (its parse information included) is three times the size of its text: 3.0
    /// against 1.0 MiB of a cold build's peak at 6 796 bundles. Parsed again where it is used.
    private let location: Location
    /// The catalog's declared compressed size; more bytes than this are refused.
    package let size: Int64
    /// Regions that need the bundle.
    package let regions: [RegionID]

    /// Extra header lines sent with the request (never printed).
    package var headers: [String] = []

    /// Where the bundle is fetched from (an absolute URL).
    package var url: URL {
        switch location {
        case .text(let text): URL(string: text)!
        case .parsed(let url): url
        }
    }

    private enum Location: Sendable, Equatable {
        /// Text that parses back to the same URL (every URL a catalog or remote cache makes).
        case text(String)
        /// A URL whose text would not parse back as it is, kept parsed.
        case parsed(URL)
    }

    package init(digest: BundleDigest, url: URL, size: Int64, regions: [RegionID], headers: [String] = []) {
        self.digest = digest
        let text = url.absoluteString
        location = URL(string: text) == url.absoluteURL ? .text(text) : .parsed(url)
        self.size = size
        self.regions = regions
        self.headers = headers
    }
}

/// What the fetcher reports while it works.
/// Events come from the fetcher's threads, so the handler must be quick and thread-safe.
package enum FetchEvent: Sendable {
    /// The bundle is not cached; its download (or the resume of its partial file) begins.
    case started(BundleDigest, size: Int64)
    /// Bytes of the bundle on disk so far; at most every `RetryPolicy.progressInterval` per bundle, and at the end.
    case progress(BundleDigest, received: Int64, size: Int64)
    /// The bundle matched its digest and is in the cache.
    case verified(BundleDigest, size: Int64)
    /// The bundle was already in the cache (or another fetcher sharing the cache just put it there).
    case alreadyCached(BundleDigest, size: Int64)
    /// An attempt failed; attempt number `attempt` follows after `delaySeconds`.
    case retry(BundleDigest, attempt: Int, reason: String, delaySeconds: Double)
    /// The bundle was given up; `reason` is the `FetchError`'s description.
    case failed(BundleDigest, reason: String)
}

/// A bundle that could not be fetched: what, from where, why, after how many attempts.
package struct FetchError: Error, Sendable, CustomStringConvertible {
    package enum Reason: Sendable, Equatable {
        case digestMismatch(actual: SHA256Digest)
        case tooLarge(received: Int64)
        case truncated(received: Int64)
        case httpStatus(Int)
        case transport(String)
        /// Slower than the policy's low-speed limit for too long, or silent before the first byte.
        case stalled(String)
        case local(FileError)
        case cancelled
    }
    package let bundle: BundleDigest
    package let url: URL
    package let regions: [RegionID]
    package let reason: Reason
    package let attempts: Int
    /// The last HTTP status the server answered with, when there was one (also for transport failures after it).
    package let httpStatus: Int?

    package init(bundle: BundleDigest, url: URL, regions: [RegionID], reason: Reason, attempts: Int, httpStatus: Int? = nil) {
        self.bundle = bundle
        self.url = url
        self.regions = regions
        self.reason = reason
        self.attempts = attempts
        self.httpStatus = httpStatus
    }

    package var description: String {
        let regionList = regions.isEmpty ? "" : " (regions \(regions.map(\.rawValue).joined(separator: ", ")))"
        var status = ""
        if case .httpStatus(let code) = reason {
            status = Self.advice(forStatus: code)
        } else if let httpStatus {
            status = " (last HTTP status \(httpStatus))"
        }
        return "bundle \(bundle)\(regionList) from \(url.absoluteString): \(whatFailed)\(status) after \(attempts) attempt\(attempts == 1 ? "" : "s")"
    }

    /// The reason alone, without bundle, URL and attempts (for `retry` events).
    package var whatFailed: String {
        let what: String
        switch reason {
        case .digestMismatch(let actual): what = "content does not match its digest (got sha256:\(actual)); the server or a cache holds bad bytes"
        case .tooLarge(let received): what = "server sent more than the declared size (\(received) bytes so far)"
        case .truncated(let received): what = "download ended early after \(received) bytes"
        case .stalled(let message): what = "transfer stalled or too slow (\(message))"
        case .httpStatus(let status): what = "HTTP status \(status)"
        case .transport(let message): what = message
        case .local(let error): what = error.description
        case .cancelled: what = "cancelled"
        }
        return what
    }

    private static func advice(forStatus status: Int) -> String {
        switch status {
        case 404, 410: return " (not on the server; is the catalog's URL or mapVersion right?)"
        case 401, 403: return " (access denied by the server)"
        case 416: return " (the server's file is shorter than the catalog's declared size)"
        case 408, 429, 500...599: return " (the server kept failing; try again later)"
        default: return ""
        }
    }
}
