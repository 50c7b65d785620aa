import MapFormat

/// Reads a `multipart/byteranges` body (RFC 9110 §14.6, the answer to a request with several
/// ranges) as it streams in, handing each part's bytes on with their absolute offsets (issue 21).
///
/// Strict, because what it hands on is written into a file being assembled: every delimiter must be
/// `CRLF--boundary` exactly where a part ends, every part must carry one `Content-Range: bytes a-b/total`
/// with the file's size, a part must start at the start of a range asked for and end at the end of
/// one (a server may merge neighbouring ranges into one part) and may not overlap an earlier part;
/// header lines and the number of parts are bounded. The first violation stops the parse: what came
/// before it stays (each chunk is checked against its digest later), the rest is fetched again.
package struct ByteRangesParser: Sendable {
    /// The ranges asked for (inclusive, sorted, disjoint).
    package let asked: [ClosedRange<Int64>]
    /// The size of the whole file, which every part's `Content-Range` must state.
    package let total: Int64
    private let delimiter: [UInt8]  // "\r\n--" + boundary
    private var state = State.preamble
    private var line: [UInt8] = []
    private var headerLines = 0
    private var partRange: ClosedRange<Int64>?
    /// The parts taken whole so far, in the order they came.
    package private(set) var parts: [ClosedRange<Int64>] = []
    /// Why the parse stopped, if it did.
    package private(set) var problem: String?

    private enum State: Sendable {
        /// Before the first delimiter: only empty lines.
        case preamble
        /// Header lines of a part, up to the empty line.
        case headers
        /// `remaining` bytes of a part's body, the next at `offset`.
        case body(offset: Int64, remaining: Int64)
        /// After a body: `matched` bytes of the delimiter seen.
        case delimiter(matched: Int)
        /// After a delimiter: `--` (the last) or CRLF (another part); `seen` bytes of it so far.
        case afterDelimiter(seen: [UInt8])
        /// After the closing delimiter: ignored, but bounded.
        case epilogue(bytes: Int)
        /// Stopped by a problem.
        case failed
    }

    /// Longest header line taken, and most header lines per part.
    static let maxLineLength = 1024
    static let maxHeaderLines = 16
    /// Bytes ignored after the closing delimiter.
    static let maxEpilogue = 1024

    /// A parser for a body whose `Content-Type` gave `boundary`.
    package init(boundary: String, asked: [ClosedRange<Int64>], total: Int64) {
        self.asked = asked.sorted { $0.lowerBound < $1.lowerBound }
        self.total = total
        delimiter = Array("\r\n--\(boundary)".utf8)
    }

    /// The boundary of a `multipart/byteranges` `Content-Type` value, or nil when the value is not
    /// one or its boundary is not one RFC 2046 allows (1 to 70 of its characters, not ending in a space).
    package static func boundary(ofContentType value: String) -> String? {
        let fields = value.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingSpaces() }
        guard let type = fields.first, type.lowercased() == "multipart/byteranges" else { return nil }
        var found: String?
        for field in fields.dropFirst() {
            guard let equals = field.firstIndex(of: "=") else { continue }
            guard field[..<equals].trimmingSpaces().lowercased() == "boundary" else { continue }
            guard found == nil else { return nil }  // two boundaries: refuse rather than guess
            var raw = Substring(field[field.index(after: equals)...].trimmingSpaces())
            if raw.hasPrefix("\"") {
                guard raw.count >= 2, raw.hasSuffix("\"") else { return nil }
                raw = raw.dropFirst().dropLast()
            }
            found = String(raw)
        }
        guard let boundary = found, (1...70).contains(boundary.utf8.count), boundary.utf8.last != 0x20 else { return nil }
        let allowed = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=? ".utf8)
        guard boundary.utf8.allSatisfy({ allowed.contains($0) }) else { return nil }
        return boundary
    }

    /// True once the closing delimiter has been read with no problem.
    package var isFinished: Bool {
        if case .epilogue = state { return problem == nil }
        return false
    }

    /// Reads `bytes`, handing body bytes to `sink` with their absolute offsets (returning false stops the
    /// parse). Returns false once the parse has stopped, for a problem or because `sink` refused.
    package mutating func consume(_ bytes: RawSpan, sink: (RawSpan, Int64) -> Bool) -> Bool {
        var index = 0
        while index < bytes.byteCount {
            switch state {
            case .failed:
                return false
            case .body(let offset, let remaining):
                let take = min(Int64(bytes.byteCount - index), remaining)
                let piece = bytes.extracting(index..<(index + Int(take)))
                guard sink(piece, offset) else { return fail("the bytes at offset \(offset) could not be written") }
                index += Int(take)
                state = remaining == take ? .delimiter(matched: 0) : .body(offset: offset + take, remaining: remaining - take)
            case .delimiter(let matched):
                guard bytes[byteAt: index] == delimiter[matched] else {
                    return fail("a part of \(partDescription) is not followed by the boundary")
                }
                index += 1
                state = matched + 1 == delimiter.count ? .afterDelimiter(seen: []) : .delimiter(matched: matched + 1)
            case .afterDelimiter(var seen):
                seen.append(bytes[byteAt: index])
                index += 1
                if seen.count < 2 {
                    state = .afterDelimiter(seen: seen)
                } else if seen == [0x0D, 0x0A] {
                    state = .headers
                    headerLines = 0
                    partRange = nil
                } else if seen == [0x2D, 0x2D] {
                    guard parts.count > 0 else { return fail("the body ends before any part") }
                    state = .epilogue(bytes: 0)
                } else {
                    return fail("a boundary is followed by neither CRLF nor '--'")
                }
            case .epilogue(let count):
                let more = count + bytes.byteCount - index
                guard more <= Self.maxEpilogue else { return fail("more than \(Self.maxEpilogue) bytes after the closing boundary") }
                state = .epilogue(bytes: more)
                index = bytes.byteCount
            case .preamble, .headers:
                let byte = bytes[byteAt: index]
                index += 1
                line.append(byte)
                guard line.count <= Self.maxLineLength else { return fail("a header line longer than \(Self.maxLineLength) bytes") }
                guard byte == 0x0A else { continue }
                guard line.count >= 2, line[line.count - 2] == 0x0D else { return fail("a header line that does not end in CRLF") }
                let text = line.dropLast(2)
                line.removeAll(keepingCapacity: true)
                guard takeLine(text) else { return false }
            }
        }
        return problem == nil
    }

    private mutating func takeLine(_ text: ArraySlice<UInt8>) -> Bool {
        if case .preamble = state {
            if text.isEmpty { return true }
            guard Array(text) == Array(delimiter.dropFirst(2)) else { return fail("the body does not start with its boundary") }
            state = .headers
            headerLines = 0
            partRange = nil
            return true
        }
        if text.isEmpty {
            guard let range = partRange else { return fail("a part without Content-Range") }
            state = .body(offset: range.lowerBound, remaining: range.upperBound - range.lowerBound + 1)
            parts.append(range)
            return true
        }
        headerLines += 1
        guard headerLines <= Self.maxHeaderLines else { return fail("a part with more than \(Self.maxHeaderLines) header lines") }
        let string = String(decoding: text, as: UTF8.self)
        guard let colon = string.firstIndex(of: ":") else { return fail("a part header without a colon: '\(string)'") }
        guard string[..<colon].lowercased() == "content-range" else { return true }
        guard partRange == nil else { return fail("a part with two Content-Range headers") }
        let value = String(string[string.index(after: colon)...]).trimmingSpaces()
        guard let range = Self.contentRange(value, total: total) else {
            return fail("a part's Content-Range '\(value)' is not 'bytes a-b/\(total)'")
        }
        guard asked.contains(where: { $0.lowerBound == range.lowerBound }), asked.contains(where: { $0.upperBound == range.upperBound }) else {
            return fail("a part of bytes \(range.lowerBound)-\(range.upperBound) that was not asked for")
        }
        guard !parts.contains(where: { $0.overlaps(range) }) else {
            return fail("a part of bytes \(range.lowerBound)-\(range.upperBound) overlaps an earlier one")
        }
        partRange = range
        return true
    }

    /// `bytes a-b/total` with `a <= b < total` and the given total, as `a...b`.
    package static func contentRange(_ value: String, total: Int64) -> ClosedRange<Int64>? {
        guard value.hasPrefix("bytes ") else { return nil }
        let spec = value.dropFirst(6)
        guard let dash = spec.firstIndex(of: "-"), let slash = spec.firstIndex(of: "/"), dash < slash else { return nil }
        func number(_ text: Substring) -> Int64? {
            guard !text.isEmpty, text.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return Int64(text)
        }
        guard let start = number(spec[..<dash]), let end = number(spec[spec.index(after: dash)..<slash]),
            let size = number(spec[spec.index(after: slash)...]), size == total, start <= end, end < total
        else { return nil }
        return start...end
    }

    private var partDescription: String {
        parts.last.map { "bytes \($0.lowerBound)-\($0.upperBound)" } ?? "the body"
    }

    private mutating func fail(_ reason: String) -> Bool {
        problem = reason
        state = .failed
        return false
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    fileprivate func trimmingSpaces() -> String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view = view.dropFirst() }
        while let last = view.last, last == " " || last == "\t" { view = view.dropLast() }
        return String(view)
    }
}
