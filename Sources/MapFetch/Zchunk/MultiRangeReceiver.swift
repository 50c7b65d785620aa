import Synchronization

/// Takes the answer to one request for several ranges (`Range: bytes=a-b,c-d,…`, issue 21): a
/// `multipart/byteranges` body read by `ByteRangesParser`, or a single `206` part (a server may
/// answer one range only, or merge them), handing the bytes to `sink` with their absolute offsets.
/// A `200` (the server ignores multi-range requests, or all ranges) is stopped at the head.
final class MultiRangeReceiver: CurlReceiver, Sendable {
    /// What came back.
    enum Answer: Sendable, Equatable {
        /// Every range asked for, in a well-formed multipart body.
        case complete
        /// A `200`: the server did not honour the ranges; single-range requests may still work.
        case ignoredRanges
        /// A plain `206` with one range (taken if it was one asked for): ask for the others one by one.
        case singleRange
        /// Anything else: an error status, a malformed or short body. `parts` were taken whole before it.
        case failed(String)
    }

    private enum Mode: Sendable {
        case waiting
        case multipart(ByteRangesParser)
        case single(start: Int64, offset: Int64, end: Int64)
    }

    private struct State: Sendable {
        var received: Int64 = 0
        var mode = Mode.waiting
        var problem: Answer?
        var taken: [ClosedRange<Int64>] = []
    }

    private let asked: [ClosedRange<Int64>]
    private let total: Int64
    private let sink: @Sendable (RawSpan, Int64) -> Bool
    private let state = Mutex(State())

    /// A receiver for `asked` (disjoint inclusive ranges) of a file of `total` bytes.
    init(asked: [ClosedRange<Int64>], total: Int64, sink: @escaping @Sendable (RawSpan, Int64) -> Bool) {
        self.asked = asked.sorted { $0.lowerBound < $1.lowerBound }
        self.total = total
        self.sink = sink
    }

    /// The value of a `Range` header asking for `ranges` (without `bytes=`, as `CURLOPT_RANGE` takes it).
    static func rangeSpec(_ ranges: [ClosedRange<Int64>]) -> String {
        ranges.map { "\($0.lowerBound)-\($0.upperBound)" }.joined(separator: ",")
    }

    func receive(head: CurlResponseHead) -> Bool {
        state.withLock { state in
            switch head.status {
            case 206:
                let type = head.headers["content-type"] ?? ""
                if type.lowercased().hasPrefix("multipart/") {
                    guard let boundary = ByteRangesParser.boundary(ofContentType: type) else {
                        state.problem = .failed("a multipart answer without a usable boundary ('\(type)')")
                        return false
                    }
                    state.mode = .multipart(ByteRangesParser(boundary: boundary, asked: asked, total: total))
                    return true
                }
                guard let value = head.headers["content-range"], let range = ByteRangesParser.contentRange(value, total: total),
                    asked.contains(where: { $0.lowerBound == range.lowerBound }), asked.contains(where: { $0.upperBound == range.upperBound })
                else {
                    state.problem = .failed("a 206 answer whose Content-Range '\(head.headers["content-range"] ?? "")' was not asked for")
                    return false
                }
                state.mode = .single(start: range.lowerBound, offset: range.lowerBound, end: range.upperBound)
                return true
            case 200:
                state.problem = .ignoredRanges
                return false
            default:
                state.problem = .failed("HTTP status \(head.status)")
                return false
            }
        }
    }

    func receive(body: RawSpan) -> Bool {
        state.withLock { state in
            state.received += Int64(body.byteCount)
            switch state.mode {
            case .waiting:
                return false
            case .single(let start, let offset, let end):
                guard offset + Int64(body.byteCount) <= end + 1 else {
                    state.problem = .failed("the server sent more than the range it announced")
                    return false
                }
                guard sink(body, offset) else {
                    state.problem = .failed("could not write the range")
                    return false
                }
                state.mode = .single(start: start, offset: offset + Int64(body.byteCount), end: end)
                return true
            case .multipart(var parser):
                let going = parser.consume(body, sink: sink)
                state.mode = .multipart(parser)
                return going
            }
        }
    }

    /// What the transfer came to, given how it ended.
    func answer(_ outcome: CurlOutcome) -> Answer {
        state.withLock { state in
            if let problem = state.problem { return problem }
            switch state.mode {
            case .waiting:
                switch outcome.ending {
                case .completed: return .failed("an empty answer")
                case .cancelled: return .failed("cancelled")
                case .stoppedByReceiver: return .failed("stopped")
                case .timedOut(let message), .failed(let message, _): return .failed(message)
                }
            case .single(_, let offset, let end):
                return outcome.ending == .completed && offset == end + 1 ? .singleRange : .failed("the range ended early")
            case .multipart(let parser):
                if let problem = parser.problem { return .failed(problem) }
                guard outcome.ending == .completed, parser.isFinished else {
                    return .failed("the multipart answer ended before its closing boundary")
                }
                let covered = asked.allSatisfy { range in
                    parser.parts.contains { $0.lowerBound <= range.lowerBound && range.upperBound <= $0.upperBound }
                }
                return covered ? .complete : .failed("the multipart answer lacks some of the ranges asked for")
            }
        }
    }

    /// The ranges asked for that arrived whole (within a part that ended, or the single range).
    var completedRanges: [ClosedRange<Int64>] {
        state.withLock { state in
            let whole: [ClosedRange<Int64>]
            switch state.mode {
            case .waiting: whole = []
            case .single(let start, let offset, _):
                whole = offset > start ? [start...(offset - 1)] : []
            case .multipart(let parser):
                // The last part may have been cut off; only parts followed by anything are whole.
                whole = parser.isFinished ? parser.parts : Array(parser.parts.dropLast())
            }
            return asked.filter { range in whole.contains { $0.lowerBound <= range.lowerBound && range.upperBound <= $0.upperBound } }
        }
    }

    /// Bytes taken so far (multipart framing included).
    var received: Int64 { state.withLock { $0.received } }
}
