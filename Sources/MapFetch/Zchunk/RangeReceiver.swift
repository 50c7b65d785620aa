import Foundation
import Synchronization

/// Takes the body of one `Range: bytes=start-end` request (issue 21), handing its bytes to `sink`
/// with their absolute offsets. A server that answers 200 (it ignored the range) is stopped at the
/// head, unless the receiver takes the whole file then (`whole`: its size); a range other than the
/// one asked for is stopped at the head; more bytes than asked for stop the transfer.
final class RangeReceiver: CurlReceiver, Sendable {
    /// What came back.
    enum Answer: Sendable, Equatable {
        /// All `end - start + 1` bytes of the range.
        case complete
        /// The server sent the whole file instead (no range support): fall back to a plain download.
        case ignoredRange
        /// The server ignored the range and the whole file (`whole` bytes) came instead, all of it.
        case whole
        /// Anything else: an error status, a wrong range, too few or too many bytes.
        case failed(String)
    }

    private struct State {
        var received: Int64 = 0
        var status = 0
        var problem: Answer?
        var start: Int64
        var end: Int64
    }

    private let asked: ClosedRange<Int64>
    private let whole: Int64?
    private let sink: @Sendable (RawSpan, Int64) -> Bool
    private let state: Mutex<State>

    /// A receiver for bytes `start...end`; with `whole`, a 200 is taken as the whole file of that many bytes.
    init(start: Int64, end: Int64, whole: Int64? = nil, sink: @escaping @Sendable (RawSpan, Int64) -> Bool) {
        asked = start...end
        self.whole = whole
        self.sink = sink
        state = Mutex(State(start: start, end: end))
    }

    func receive(head: CurlResponseHead) -> Bool {
        state.withLock { state in
            state.status = head.status
            switch head.status {
            case 206:
                // `Content-Range: bytes a-b/total` must be the range asked for.
                if let range = head.headers["content-range"], !range.hasPrefix("bytes \(asked.lowerBound)-\(asked.upperBound)/") {
                    state.problem = .failed("the server answered range '\(range)' for bytes \(asked.lowerBound)-\(asked.upperBound)")
                    return false
                }
                return true
            case 0:
                return true  // file://: libcurl applies the range itself
            case 200:
                guard let whole else {
                    state.problem = .ignoredRange
                    return false
                }
                state.start = 0
                state.end = whole - 1
                return true
            default:
                state.problem = .failed("HTTP status \(head.status)")
                return false
            }
        }
    }

    func receive(body: RawSpan) -> Bool {
        let offset = state.withLock { state -> Int64? in
            let at = state.start + state.received
            guard at + Int64(body.byteCount) <= state.end + 1 else {
                state.problem = .failed("the server sent more than the \(state.end - state.start + 1) bytes asked for")
                return nil
            }
            state.received += Int64(body.byteCount)
            return at
        }
        guard let offset else { return false }
        return sink(body, offset)
    }

    /// What the transfer came to, given how it ended.
    func answer(_ outcome: CurlOutcome) -> Answer {
        state.withLock { state in
            if let problem = state.problem { return problem }
            switch outcome.ending {
            case .completed:
                let wanted = state.end - state.start + 1
                guard state.received == wanted else { return .failed("the answer ended after \(state.received) of \(wanted) bytes") }
                return state.status == 200 ? .whole : .complete
            case .cancelled: return .failed("cancelled")
            case .stoppedByReceiver: return .failed("could not write the range")
            case .timedOut(let message), .failed(let message, _): return .failed(message)
            }
        }
    }

    /// Bytes taken so far.
    var received: Int64 { state.withLock { $0.received } }
}
