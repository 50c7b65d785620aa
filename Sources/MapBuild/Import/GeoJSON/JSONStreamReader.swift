import MapFormat
import MapIO

/// A pull reader of one JSON document (RFC 8259) from a file, read in fixed-size chunks through one
/// reused buffer: memory holds a chunk and what the caller keeps, never the document.
///
/// The caller walks the document (`beginObject`, `nextMember`, `readKey`, …) and keeps only what it
/// needs; `skipValue` checks a value it does not need without keeping any of it, iteratively, so no
/// nesting can exhaust the stack. The grammar is the one Foundation's `JSONSerialization` (which
/// `mappack import` used before) accepts: strict RFC 8259, nesting at most 512 deep, strings of
/// valid UTF-8 with surrogate escapes in pairs, numbers that fit a Double, nothing but whitespace
/// after the top-level value; a UTF-8 byte order mark is passed over, and UTF-16 and UTF-32 text is
/// read as Foundation detects it (`JSONTextSource`).
struct JSONStreamReader {
    /// Why reading stopped.
    enum Failure: Error {
        /// The bytes are not JSON: the byte offset (in the UTF-8 text) and what is wrong there.
        case syntax(offset: Int, reason: String)
        /// The file could not be read.
        case io(FileError)
        /// A polygon's coordinates could not go to their scratch file (`GeoJSONCoordinates`).
        case scratch(FileError)
    }

    /// The JSON type of the next value.
    enum ValueKind {
        case object, array, string, number, bool, null
    }

    /// Deepest nesting of arrays and objects accepted (`JSONSerialization`'s limit).
    static let maxDepth = 512
    /// Longest number accepted, in bytes: far past any Double's digits, short of a number that is
    /// a memory attack.
    static let maxNumberBytes = 64 << 10

    private var source: JSONTextSource
    private var chunk: [UInt8] = []
    private var index = 0
    /// The text offset of `chunk[0]`.
    private var chunkOffset = 0
    private var ended = false
    /// Open arrays and objects.
    private(set) var depth = 0
    /// Decoded bytes of the string or number being read; reused.
    private var text: [UInt8] = []

    init(file: ReadableFile) {
        source = JSONTextSource(file: file)
    }

    /// Bytes of UTF-8 text consumed so far.
    var offset: Int { chunkOffset + index }

    func failure(_ reason: String) -> Failure { .syntax(offset: offset, reason: reason) }

    /// The next byte, reading another chunk when this one is used up; nil at the end of the text.
    @inline(__always)
    private mutating func peekByte() throws(Failure) -> UInt8? {
        if index < chunk.count { return chunk[index] }
        return try refill() ? chunk[index] : nil
    }

    private mutating func refill() throws(Failure) -> Bool {
        guard !ended else { return false }
        chunkOffset += chunk.count
        index = 0
        try source.next(into: &chunk, at: chunkOffset)
        if chunk.isEmpty { ended = true }
        return !chunk.isEmpty
    }

    /// The next byte, consumed; the end of the text is a syntax error.
    @inline(__always)
    private mutating func nextByte() throws(Failure) -> UInt8 {
        guard let byte = try peekByte() else { throw failure("unexpected end of file") }
        index += 1
        return byte
    }

    /// The next byte that is not whitespace (not consumed); nil at the end of the text.
    private mutating func skipWhitespace() throws(Failure) -> UInt8? {
        while let byte = try peekByte() {
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return byte
            }
        }
        return nil
    }

    /// The type of the value that comes next (after whitespace).
    mutating func peekKind() throws(Failure) -> ValueKind {
        guard let byte = try skipWhitespace() else { throw failure("unexpected end of file where a value was expected") }
        switch byte {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        default: throw failure("unexpected byte 0x\(String(byte, radix: 16)) where a value was expected")
        }
    }

    private mutating func open(_ byte: UInt8) throws(Failure) {
        guard try skipWhitespace() == byte else { throw failure("expected '\(Character(Unicode.Scalar(byte)))'") }
        guard depth < JSONStreamReader.maxDepth else { throw failure("arrays and objects nested deeper than \(JSONStreamReader.maxDepth)") }
        index += 1
        depth += 1
    }

    /// Consumes the `{` of the object that comes next.
    mutating func beginObject() throws(Failure) { try open(UInt8(ascii: "{")) }

    /// Consumes the `[` of the array that comes next.
    mutating func beginArray() throws(Failure) { try open(UInt8(ascii: "[")) }

    /// Moves to the next member of the object begun last: true when a key comes next (read it with
    /// `readKey`, then its value), false past the object's `}`. `first` is true before the first call.
    mutating func nextMember(first: inout Bool) throws(Failure) -> Bool {
        guard var byte = try skipWhitespace() else { throw failure("unexpected end of file inside an object") }
        if byte == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return false
        }
        if !first {
            guard byte == UInt8(ascii: ",") else { throw failure("expected ',' or '}' after an object's member") }
            index += 1
            guard let after = try skipWhitespace() else { throw failure("unexpected end of file inside an object") }
            byte = after
        }
        first = false
        guard byte == UInt8(ascii: "\"") else { throw failure("expected a string key") }
        return true
    }

    /// Moves to the next element of the array begun last: true when a value comes next, false past
    /// the array's `]`. `first` is true before the first call.
    mutating func nextElement(first: inout Bool) throws(Failure) -> Bool {
        guard let byte = try skipWhitespace() else { throw failure("unexpected end of file inside an array") }
        if byte == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return false
        }
        if !first {
            guard byte == UInt8(ascii: ",") else { throw failure("expected ',' or ']' after an array's element") }
            index += 1
        }
        first = false
        return true
    }

    /// A member's key and the `:` after it, as `readString` reads strings.
    mutating func readKey(limit: Int = 256, keepLonger: ([UInt8]) -> Bool = { _ in false }) throws(Failure) -> String? {
        let key = try readString(limit: limit, keepLonger: keepLonger)
        guard try skipWhitespace() == UInt8(ascii: ":") else { throw failure("expected ':' after an object's key") }
        index += 1
        return key
    }

    /// The string that comes next, unescaped. Past `limit` bytes of UTF-8 it is kept only when
    /// `keepLonger`, shown its first `limit` bytes or more, says so; otherwise it is checked to its
    /// end and nil is returned, so a huge string nobody needs costs no memory.
    mutating func readString(limit: Int = .max, keepLonger: ([UInt8]) -> Bool = { _ in false }) throws(Failure) -> String? {
        guard try skipWhitespace() == UInt8(ascii: "\"") else { throw failure("expected a string") }
        index += 1
        clearText()
        var keeping = limit > 0
        var cap = limit
        while true {
            if index == chunk.count, !(try refill()) { throw failure("unexpected end of file inside a string") }
            // A run of plain ASCII in one copy.
            var end = index
            while end < chunk.count {
                let byte = chunk[end]
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { break }
                end += 1
            }
            if keeping, end > index { text.append(contentsOf: chunk[index..<end]) }
            index = end
            if index == chunk.count { continue }
            let byte = chunk[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return keeping ? String(decoding: text, as: UTF8.self) : nil
            case UInt8(ascii: "\\"):
                let scalar = try readEscape()
                if keeping { text.append(contentsOf: UTF8.encode(scalar)!) }
            case 0..<0x20:
                throw .syntax(offset: offset - 1, reason: "an unescaped control byte 0x\(String(byte, radix: 16)) in a string")
            default:
                try readMultibyte(lead: byte, keeping: keeping)
            }
            if keeping, text.count > cap {
                if keepLonger(text) {
                    cap = .max
                } else {
                    keeping = false
                    text.removeAll(keepingCapacity: true)
                }
            }
        }
    }

    /// Empties `text`, letting go of the room a huge string took.
    private mutating func clearText() {
        if text.capacity > 1 << 20 { text = [] } else { text.removeAll(keepingCapacity: true) }
    }

    /// The rest of a UTF-8 sequence after its lead byte, checked as Unicode 15 table 3-7 says
    /// (no overlong forms, no surrogates, nothing past U+10FFFF).
    private mutating func readMultibyte(lead: UInt8, keeping: Bool) throws(Failure) {
        let start = offset - 1
        let (count, second): (Int, ClosedRange<UInt8>)
        switch lead {
        case 0xC2...0xDF: (count, second) = (1, 0x80...0xBF)
        case 0xE0: (count, second) = (2, 0xA0...0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: (count, second) = (2, 0x80...0xBF)
        case 0xED: (count, second) = (2, 0x80...0x9F)
        case 0xF0: (count, second) = (3, 0x90...0xBF)
        case 0xF1...0xF3: (count, second) = (3, 0x80...0xBF)
        case 0xF4: (count, second) = (3, 0x80...0x8F)
        default: throw .syntax(offset: start, reason: "a byte that is not UTF-8 in a string")
        }
        if keeping { text.append(lead) }
        for position in 0..<count {
            let byte = try nextByte()
            guard position == 0 ? second.contains(byte) : (0x80...0xBF).contains(byte) else {
                throw .syntax(offset: start, reason: "a byte sequence that is not UTF-8 in a string")
            }
            if keeping { text.append(byte) }
        }
    }

    /// The character of the escape after a `\`; surrogate escapes must come in pairs.
    private mutating func readEscape() throws(Failure) -> Unicode.Scalar {
        let start = offset - 1
        switch try nextByte() {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let unit = try readHex4()
            switch unit {
            case 0xD800...0xDBFF:
                guard try nextByte() == UInt8(ascii: "\\"), try nextByte() == UInt8(ascii: "u"), case let low = try readHex4(),
                    (0xDC00...0xDFFF).contains(low)
                else { throw .syntax(offset: start, reason: "a high surrogate escape without a low one after it") }
                return Unicode.Scalar(0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00))!
            case 0xDC00...0xDFFF: throw .syntax(offset: start, reason: "a low surrogate escape without a high one before it")
            default: return Unicode.Scalar(UInt32(unit))!
            }
        default: throw .syntax(offset: start, reason: "an invalid escape in a string")
        }
    }

    private mutating func readHex4() throws(Failure) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard let digit = Hex.value(of: try nextByte(), letters: .anyCase) else {
                throw .syntax(offset: offset - 1, reason: "expected 4 hex digits after \\u")
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }

    /// The number that comes next, as Foundation gives it to `mappack import`: the nearest Double
    /// (an integer without fraction or exponent that fits 64 bits is exact, so `-0` is 0); one too
    /// large for a Double is refused.
    mutating func readNumber() throws(Failure) -> Double {
        let start = offset
        let (literal, integer) = try readNumberLiteral()
        if integer, let exact = Int64(literal) { return Double(exact) }
        guard let value = Double(literal), value.isFinite else {
            throw .syntax(offset: start, reason: "the number \(literal.prefix(40)) does not fit a Double")
        }
        return value
    }

    /// The number that comes next as it is written, checked against JSON's grammar, and whether it
    /// is an integer (no fraction, no exponent).
    mutating func readNumberLiteral() throws(Failure) -> (literal: String, integer: Bool) {
        let start = offset
        clearText()
        var integer = true
        func digits(_ reader: inout JSONStreamReader, atLeastOne: Bool) throws(Failure) {
            var seen = 0
            while let byte = try reader.peekByte(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                reader.index += 1
                reader.text.append(byte)
                seen += 1
                if reader.text.count > JSONStreamReader.maxNumberBytes {
                    throw .syntax(offset: start, reason: "a number longer than \(JSONStreamReader.maxNumberBytes) bytes")
                }
            }
            if atLeastOne, seen == 0 { throw reader.failure("expected a digit in a number") }
        }
        if try peekByte() == UInt8(ascii: "-") {
            index += 1
            text.append(UInt8(ascii: "-"))
        }
        if try peekByte() == UInt8(ascii: "0") {
            index += 1
            text.append(UInt8(ascii: "0"))
            if let byte = try peekByte(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                throw failure("a number with a leading zero")
            }
        } else {
            try digits(&self, atLeastOne: true)
        }
        if try peekByte() == UInt8(ascii: ".") {
            index += 1
            text.append(UInt8(ascii: "."))
            integer = false
            try digits(&self, atLeastOne: true)
        }
        if let byte = try peekByte(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            index += 1
            text.append(byte)
            integer = false
            if let sign = try peekByte(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                index += 1
                text.append(sign)
            }
            try digits(&self, atLeastOne: true)
        }
        return (String(decoding: text, as: UTF8.self), integer)
    }

    /// `true` or `false`, whichever comes next.
    mutating func readBool() throws(Failure) -> Bool {
        if try skipWhitespace() == UInt8(ascii: "t") {
            try expectLiteral("true")
            return true
        }
        try expectLiteral("false")
        return false
    }

    /// The `null` that comes next.
    mutating func readNull() throws(Failure) { try expectLiteral("null") }

    private mutating func expectLiteral(_ word: String) throws(Failure) {
        _ = try skipWhitespace()
        let start = offset
        for expected in word.utf8 {
            guard try peekByte() == expected else { throw .syntax(offset: start, reason: "expected \(word)") }
            index += 1
        }
    }

    /// Checks the value that comes next and keeps none of it. Iterative: the only stack is one
    /// flag per open array or object, at most `maxDepth`.
    mutating func skipValue() throws(Failure) {
        var open: [(isObject: Bool, first: Bool)] = []
        repeat {
            switch try peekKind() {
            case .object:
                try beginObject()
                open.append((true, true))
            case .array:
                try beginArray()
                open.append((false, true))
            case .string: _ = try readString(limit: 0)
            case .number: _ = try readNumber()
            case .bool: _ = try readBool()
            case .null: try readNull()
            }
            // On to the next value, closing what ends before it.
            while let last = open.last {
                var first = last.first
                let more = last.isObject ? try nextMember(first: &first) : try nextElement(first: &first)
                open[open.count - 1].first = first
                if more {
                    if last.isObject { _ = try readKey(limit: 0) }
                    break
                }
                open.removeLast()
            }
        } while !open.isEmpty
    }

    /// Checks that nothing but whitespace follows the top-level value.
    mutating func expectEnd() throws(Failure) {
        if try skipWhitespace() != nil { throw failure("more after the end of the document") }
    }
}
