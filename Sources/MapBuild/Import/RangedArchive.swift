import Foundation
import MapFetch
import MapFormat
import MapIO

/// A `--tiles https://…/x.pmtiles` archive read by HTTP Range requests through `FetchClient`: the
/// first request (the header and, by the spec, the root directory) gives its size and a validator
/// (a strong ETag, else Last-Modified), which every later request sends as `If-Range`, so an archive
/// replaced between requests comes back whole and is refused, never mixed. A request that breaks
/// is asked again from the byte it reached, as bundle downloads resume; transient failures (a
/// dropped connection, a 5xx, a 429) are retried by the client's `RetryPolicy`.
///
/// Blocking: the import runs on its own thread.
final class RangedArchive {
    /// The URL as given (errors name it).
    let name: String
    let url: URL
    let client: FetchClient
    /// The archive's bytes (the `Content-Range` total), known after `open`.
    private(set) var size: UInt64 = 0
    /// Body bytes received, and requests made.
    private(set) var fetched: UInt64 = 0
    private(set) var requests = 0
    /// The first answer's `Last-Modified`, as a time.
    private(set) var modified: Date?
    /// The strong ETag, or the Last-Modified date, of the first answer.
    private var validator: String?
    private var etag: String?
    /// The first bytes, from `open`: the header, and the root directory and metadata when they
    /// follow it closely, read again without a request.
    private var prefix = Data()
    /// Leaf directories read ahead (`directory(offset:count:section:)`): a window of the section.
    private var leafWindow = (start: UInt64(0), bytes: Data())

    /// Bytes of leaf directories fetched at once: the walk reads leaves front to back, so one
    /// request brings many.
    static let leafWindowBytes: UInt64 = 1 << 20

    /// Whether `--tiles` names an archive on a server rather than a file.
    static func isRemote(_ tiles: String) -> Bool {
        let lowered = tiles.lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }

    init(_ tiles: String, client: FetchClient = FetchClient(retry: .standard)) throws(ImportError) {
        name = tiles
        guard let url = URL(string: tiles), url.host != nil else {
            throw .unreadable(file: tiles, reason: "not a URL mappack can fetch; give http(s)://host/path.pmtiles or a file path")
        }
        self.url = url
        self.client = client
    }

    /// The first `count` bytes (fewer when the archive is shorter), which also fix the archive's
    /// size and validator.
    func open(prefix count: Int) throws(ImportError) -> Data {
        prefix = try read(offset: 0, count: count, first: true)
        return prefix
    }

    /// `count` bytes at `offset` of the leaf directories section (`section`: its offset and length
    /// in the archive), through a window read ahead of the walk.
    func leafDirectory(offset: UInt64, count: Int, section: (offset: UInt64, length: UInt64)) throws(ImportError) -> Data {
        let start = leafWindow.start
        if offset >= start, offset + UInt64(count) <= start + UInt64(leafWindow.bytes.count) {
            let from = Int(offset - start)
            return leafWindow.bytes.subdata(in: from..<from + count)
        }
        let length = max(UInt64(count), min(Self.leafWindowBytes, section.length - (offset - section.offset)))
        leafWindow = (offset, try read(offset: offset, count: Int(length)))
        return leafWindow.bytes.prefix(count)
    }

    /// `count` bytes at `offset`, resumed and retried until they are all here or a failure is final.
    func read(offset: UInt64, count: Int, first: Bool = false) throws(ImportError) -> Data {
        guard count > 0 else { return Data() }
        if !first, offset + UInt64(count) <= UInt64(prefix.count) { return prefix.subdata(in: Int(offset)..<Int(offset) + count) }
        var data = Data()
        data.reserveCapacity(count)
        var failures = 0
        var end = offset + UInt64(count) - 1
        var settled = !first
        while offset + UInt64(data.count) <= end {
            let start = offset + UInt64(data.count)
            requests += 1
            let before = data.count
            do {
                let answer = try client.get(url, range: Int64(start)...Int64(end), ifRange: settled ? validator : nil) { chunk in
                    RawBytes.append(chunk, to: &data)
                    return true
                }
                fetched += UInt64(data.count - before)
                switch answer {
                case .partial(let range, let total, let headers):
                    if !settled {
                        try settle(total: UInt64(total), headers: headers)
                        settled = true
                        end = UInt64(range.upperBound)
                    } else if UInt64(total) != size || (etag != nil && headers["etag"] != nil && headers["etag"] != etag) {
                        throw changed()
                    } else if UInt64(range.upperBound) < end {
                        throw changed()
                    }
                case .whole:
                    if !settled {
                        throw ImportError.unreadable(
                            file: name,
                            reason:
                                "the server does not honour Range requests (it answered 200 with the whole file to a request for bytes \(start)-\(end)); serve the archive from one that does (nginx, S3, …) or download it and pass its path"
                        )
                    }
                    throw changed()
                case .missing(let status):
                    if !settled { throw ImportError.unreadable(file: name, reason: "HTTP status \(status): no archive at this URL; check it") }
                    throw changed()
                }
            } catch let failure as FetchFailure {
                fetched += UInt64(data.count - before)
                // Bytes that came before the break are the range's first: ask for the rest.
                if data.count > before { failures = 0 }
                guard let delay = client.retryDelay(after: failure, failures: failures + 1) else {
                    if failure.isTransient {
                        throw ImportError.failed(reason: "\(name): \(failure.reasonText), after \(failures + 1) attempts; run the import again")
                    }
                    throw ImportError.unreadable(file: name, reason: failure.reasonText)
                }
                failures += 1
                Thread.sleep(forTimeInterval: delay)
            } catch let error as ImportError {
                throw error
            } catch {
                throw ImportError.failed(reason: "\(name): \(error)")
            }
        }
        return data
    }

    /// Takes the archive's size and validator from the first answer.
    private func settle(total: UInt64, headers: [String: String]) throws(ImportError) {
        size = total
        if let text = headers["last-modified"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
            modified = formatter.date(from: text)
        }
        if let tag = headers["etag"], !tag.hasPrefix("W/") {
            etag = tag
            validator = tag
        } else if let modified = headers["last-modified"] {
            validator = modified
        } else {
            throw .unreadable(
                file: name,
                reason:
                    "the server gives no ETag or Last-Modified, so mappack cannot tell whether the archive changes between its requests; serve it from one that does (nginx, S3, …) or download it and pass its path"
            )
        }
    }

    /// The archive answered as another file than the first request's.
    private func changed() -> ImportError {
        .failed(
            reason:
                "\(name): the archive changed while it was read (its validator \(validator ?? "-") or size \(size) no longer matches); run the import again"
        )
    }
}

extension FetchFailure {
    /// What went wrong, without the URL (the import's message names it first).
    var reasonText: String {
        switch self {
        case .tooLarge(_, let limit): "larger than \(limit) bytes"
        case .status(_, let status, _): "HTTP status \(status)"
        case .transfer(_, let status, let reason, _): (status.map { "HTTP status \($0): " } ?? "") + reason
        case .stopped: "stopped"
        }
    }
}
