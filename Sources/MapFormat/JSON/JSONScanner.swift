import Foundation

/// A forward-only reader of JSON (RFC 8259) over UTF-8 bytes, for hand-written decoders of
/// large files where Foundation's `JSONDecoder` is too slow (it builds a value tree first).
///
/// It keeps the document as raw memory (as `ManifestStream` does; the short list of such files is
/// in ARCHITECTURE.md, "Unsafe code"): every read is bounds-checked by hand, because
/// `UnsafeRawBufferPointer` only checks in debug builds; digests are handed on as `RawSpan`s. Any input, however hostile,
/// ends in a `Failure`, never a trap.
///
/// Not a `RawSpan`: on Swift 6.3.1 a struct can hold one only as a `~Escapable` type with
/// `@_lifetime` initializers, which needs the experimental `Lifetimes` feature, and every holder
/// (`CatalogReader`'s reader, `ManifestStream` and its users in MapVerify) would have to become
/// `~Escapable` too. RawSpan's own checks would also stay on in release builds, in the loops
/// whose hand checks are already there (the word loads of keys, digests and numbers).
// @safe: making one takes the buffer (an unsafe call, marked where it is made); every read after
// that is bounds-checked by hand.
@safe struct JSONScanner {
    /// Deepest nesting of arrays and objects accepted (the same limit as Foundation's parser).
    static let maxDepth = 512

    /// One step of the path from the document's root to a value.
    enum PathComponent: Sendable {
        case key(String)
        case index(Int)
    }

    /// Why the scanner, or a decoder driving it, stopped.
    struct Failure: Error {
        /// Byte offset the problem was found at.
        var offset: Int
        /// What was wrong.
        var reason: String
        /// Root-to-value path; decoders prepend their part as the error travels up.
        var path: [PathComponent] = []
    }

    /// The JSON type of the next value.
    enum ValueKind: CustomStringConvertible {
        case object, array, string, number, bool, null

        var description: String {
            switch self {
            case .object: "an object"
            case .array: "an array"
            case .string: "a string"
            case .number: "a number"
            case .bool: "a boolean"
            case .null: "null"
            }
        }
    }

    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    private var depth = 0
    /// Decoded bytes of the last string that held escapes; reused so escapes cost no allocation.
    private var scratch: [UInt8] = []

    /// Starts at the beginning of `bytes`, past a UTF-8 byte order mark if there is one.
    init(_ bytes: UnsafeRawBufferPointer) {
        unsafe self.bytes = unsafe bytes
        if bytes.count >= 3, unsafe bytes[0] == 0xEF, unsafe bytes[1] == 0xBB, unsafe bytes[2] == 0xBF { index = 3 }
    }

    /// Offset of the next unread byte.
    var offset: Int { index }

    /// Bytes not yet read, for sizing collections.
    var remainingBytes: Int { unsafe bytes.count - index }

    // MARK: Structure

    /// The kind of the next value, after skipping whitespace.
    mutating func peekKind() throws(Failure) -> ValueKind {
        skipWhitespace()
        guard unsafe index < bytes.count else { throw failure("unexpected end of input; the file is truncated") }
        switch unsafe bytes[index] {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        default: throw failure("unexpected \(describeByte(at: index)) where a value should start")
        }
    }

    /// Consumes `null` when it is next; false, consuming nothing, for any other value.
    mutating func readNull() throws(Failure) -> Bool {
        guard try peekKind() == .null else { return false }
        try expectLiteral("null")
        return true
    }

    /// Opens an object; iterate its members with `nextMember(first:)`.
    mutating func beginObject() throws(Failure) {
        try open(.object, UInt8(ascii: "{"))
    }

    /// Opens an array; iterate its elements with `nextElement(first:)`.
    mutating func beginArray() throws(Failure) {
        try open(.array, UInt8(ascii: "["))
    }

    /// True when another member follows (its key is next); false after consuming `}`.
    mutating func nextMember(first: inout Bool) throws(Failure) -> Bool {
        try nextItem(first: &first, close: UInt8(ascii: "}"), container: "object")
    }

    /// True when another element follows; false after consuming `]`.
    mutating func nextElement(first: inout Bool) throws(Failure) -> Bool {
        try nextItem(first: &first, close: UInt8(ascii: "]"), container: "array")
    }

    /// Requires that only whitespace remains.
    mutating func expectEnd() throws(Failure) {
        skipWhitespace()
        guard unsafe index == bytes.count else { throw failure("unexpected \(describeByte(at: index)) after the end of the document") }
    }

    /// Skips one value of any kind, nested values included.
    mutating func skipValue() throws(Failure) {
        switch try peekKind() {
        case .object:
            try beginObject()
            var first = true
            while try nextMember(first: &first) {
                _ = try scanString(expectingKey: true)
                try expectColon()
                try skipValue()
            }
        case .array:
            try beginArray()
            var first = true
            while try nextElement(first: &first) { try skipValue() }
        case .string: _ = try scanString(expectingKey: false)
        case .number: _ = try scanNumber()
        case .bool: _ = try readBool()
        case .null: try expectLiteral("null")
        }
    }

    // MARK: Keys

    /// What `nextMember(among:first:)` found.
    enum Member: Equatable {
        /// A member whose key is at this position in the `JSONKeys`; its value is next.
        case known(Int)
        /// A member with another key; its value is next.
        case other
        /// The closing `}`, consumed.
        case end

        /// The position of a known key.
        var known: Int? {
            if case .known(let position) = self { return position }
            return nil
        }
    }

    /// `nextMember(first:)` and `readKey(_:)` in one step. Compact input (`,"key":`, a plain key of
    /// up to 16 bytes) is matched in place with two word loads; anything else takes the general
    /// steps, which report whatever is wrong.
    mutating func nextMember(among keys: JSONKeys, first: inout Bool) throws(Failure) -> Member {
        var quote = index
        if !first, unsafe quote < bytes.count, unsafe bytes[quote] == UInt8(ascii: ",") { quote += 1 }
        if unsafe bytes.count - quote >= 18, unsafe bytes[quote] == UInt8(ascii: "\""), first || quote > index {
            let ones: UInt64 = 0x0101_0101_0101_0101
            var low = unsafe UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: quote + 1, as: UInt64.self))
            var high = unsafe UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: quote + 9, as: UInt64.self))
            // The first quote, backslash, control or non-ASCII byte must be the closing quote.
            func stops(_ word: UInt64) -> UInt64 {
                let quote = word ^ (ones &* 0x22)
                let backslash = word ^ (ones &* 0x5C)
                return (((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word) | word) & (ones &* 0x80)
            }
            let lowStops = stops(low)
            let highStops = stops(high)
            let count = lowStops != 0 ? lowStops.trailingZeroBitCount / 8 : highStops != 0 ? 8 + highStops.trailingZeroBitCount / 8 : 16
            let close = quote + 1 + count
            if count < 16, unsafe bytes[close] == UInt8(ascii: "\""), unsafe bytes[close + 1] == UInt8(ascii: ":") {
                if count < 8 {
                    low &= (1 << (UInt64(count) * 8)) &- 1
                    high = 0
                } else {
                    high &= (1 << (UInt64(count - 8) * 8)) &- 1
                }
                index = close + 2
                first = false
                return keys.position(count: count, first: low, second: high).map(Member.known) ?? .other
            }
        }
        guard try nextMember(first: &first) else { return .end }
        return try readKey(keys).map(Member.known) ?? .other
    }

    /// Reads a member's key and its `:`; the position of the matching key in `keys`, nil for any
    /// other key. Compares one or two machine words per candidate rather than byte by byte.
    mutating func readKey(_ keys: JSONKeys) throws(Failure) -> Int? {
        let span = try scanString(expectingKey: true)
        try expectColon()
        guard span.count <= JSONKeys.maxLength else { return longKeyPosition(span, in: keys) }
        let (first, second) = words(of: span)
        return keys.position(count: span.count, first: first, second: second)
    }

    /// `readKey`'s match for a key longer than `JSONKeys.maxLength`, byte by byte.
    private func longKeyPosition(_ span: StringSpan, in keys: JSONKeys) -> Int? {
        for (position, name) in keys.names.enumerated() where name.utf8.count == span.count {
            if name.utf8.enumerated().allSatisfy({ byte(of: span, at: $0.offset) == $0.element }) { return position }
        }
        return nil
    }

    /// Reads a member's key and its `:` as a string (for dictionaries).
    mutating func readKeyString() throws(Failure) -> String {
        let span = try scanString(expectingKey: true)
        try expectColon()
        return string(span)
    }

    /// A member's key written in ASCII without escapes: where its bytes are in the document.
    struct ASCIIKey {
        fileprivate let start: Int
        fileprivate let count: Int
    }

    /// What `readKeyText` found.
    enum KeyText {
        /// A key in ASCII without escapes, as its place in the document.
        case ascii(ASCIIKey)
        /// Any other key, whose equality with another is Unicode's, not the bytes'.
        case text(String)
    }

    /// Reads a member's key and its `:`; its place when it is ASCII written without escapes.
    mutating func readKeyText() throws(Failure) -> KeyText {
        let span = try scanString(expectingKey: true)
        try expectColon()
        guard !span.escaped else { return .text(string(span)) }
        for offset in 0..<span.count where unsafe bytes[span.start + offset] >= 0x80 { return .text(string(span)) }
        return .ascii(ASCIIKey(start: span.start, count: span.count))
    }

    /// True when the keys `a` and `b` are the same bytes (for ASCII, the same string).
    func same(_ a: ASCIIKey, _ b: ASCIIKey) -> Bool {
        guard a.count == b.count else { return false }
        for offset in 0..<a.count where unsafe bytes[a.start + offset] != bytes[b.start + offset] { return false }
        return true
    }

    /// True when `key` is the bytes of `text` (for ASCII text, the same string).
    func same(_ key: ASCIIKey, _ text: [UInt8]) -> Bool {
        guard key.count == text.count else { return false }
        for offset in 0..<key.count where unsafe bytes[key.start + offset] != text[offset] { return false }
        return true
    }

    /// The text of `key`.
    func text(of key: ASCIIKey) -> String { string(StringSpan(start: key.start, count: key.count, escaped: false)) }

    /// What `readKeyInteger` found.
    enum KeyInteger {
        /// Plain digits: the key is exactly `String(value)`.
        case digits(Int64)
        /// Another spelling `Int64(_:)` accepts (`+5`, `007`), as written.
        case spelled(Int64, String)
        /// A key `Int64(_:)` refuses, as written.
        case other(String)
    }

    /// Reads a member's key and its `:` as an integer with `Int64(_:)`'s rules; plain digits are
    /// read in place, so the common key costs no `String`.
    mutating func readKeyInteger() throws(Failure) -> KeyInteger {
        let span = try scanString(expectingKey: true)
        try expectColon()
        // Up to 18 digits cannot overflow; a leading zero goes the slow way so the key's text is
        // always the value's own spelling (error paths print `String(value)`).
        if !span.escaped, span.count > 0, span.count <= 18, unsafe bytes[span.start] != UInt8(ascii: "0") {
            var value: Int64 = 0
            var position = span.start
            let end = span.start + span.count
            while position < end {
                let digit = unsafe bytes[position] &- UInt8(ascii: "0")
                guard digit < 10 else { break }
                value = value &* 10 &+ Int64(digit)
                position += 1
            }
            if position == end { return .digits(value) }
        }
        let text = string(span)
        if let value = Int64(text) { return .spelled(value, text) }
        return .other(text)
    }

    // MARK: Scalars

    /// Reads a string value.
    mutating func readString() throws(Failure) -> String {
        // At a quote the kind is known; anything else (whitespace, a wrong type) goes the checked way.
        if unsafe index >= bytes.count || bytes[index] != UInt8(ascii: "\"") { try requireKind(.string) }
        // Scan first: `string(_:)` must see the scratch buffer this scan filled.
        let span = try scanString(expectingKey: false)
        return string(span)
    }

    /// Reads a string value with every check `readString` makes, without making a `String`.
    mutating func skipString() throws(Failure) {
        if unsafe index >= bytes.count || bytes[index] != UInt8(ascii: "\"") { try requireKind(.string) }
        _ = try scanString(expectingKey: false)
    }

    /// Reads a string value with every check `readString` makes; nil, without making a `String`,
    /// when it is written without escapes and `accept` takes its bytes, otherwise the string.
    mutating func readStringUnlessAccepted(_ accept: (RawSpan) -> Bool) throws(Failure) -> String? {
        if unsafe index >= bytes.count || bytes[index] != UInt8(ascii: "\"") { try requireKind(.string) }
        let span = try scanString(expectingKey: false)
        if !span.escaped, unsafe accept(UnsafeRawBufferPointer(rebasing: bytes[span.start..<(span.start + span.count)]).bytes) { return nil }
        return string(span)
    }

    /// Reads a string value, returning `previous` itself when the text is the same, so a value
    /// repeated thousands of times (a release date) shares one string's storage.
    mutating func readString(reusing previous: String?) throws(Failure) -> String {
        try requireKind(.string)
        let span = try scanString(expectingKey: false)
        if var previous, !span.escaped, previous.utf8.count == span.count {
            // Compared over contiguous UTF-8 (iterating `utf8` costs tens of instructions a byte).
            let same = previous.withUTF8 { utf8 in
                for offset in 0..<span.count where unsafe utf8[offset] != bytes[span.start + offset] { return false }
                return true
            }
            if same { return previous }
        }
        return string(span)
    }

    /// What `readPrefixedHex256` found.
    enum PrefixedHex256 {
        /// The 64 hex digits as four 64-bit words, most significant digits first.
        case words(UInt64, UInt64, UInt64, UInt64)
        /// A string of another shape, as written.
        case other(String)
    }

    /// Reads a string value that must be `prefix` followed by exactly 64 lower-case hex digits
    /// (a SHA-256), decoding the digits in place: no `String` unless the shape is wrong.
    mutating func readPrefixedHex256(prefix: StaticString) throws(Failure) -> PrefixedHex256 {
        skipWhitespace()
        if let digest = plainHex256(at: index, prefix: prefix) {
            index = digest.end
            return .words(digest.w0, digest.w1, digest.w2, digest.w3)
        }
        try requireKind(.string)
        let span = try scanString(expectingKey: false)
        return prefixedHex256(span, prefix: prefix)
    }

    /// `readPrefixedHex256` for a member's key (and its `:`).
    mutating func readKeyPrefixedHex256(prefix: StaticString) throws(Failure) -> PrefixedHex256 {
        skipWhitespace()
        if let digest = plainHex256(at: index, prefix: prefix), unsafe digest.end < bytes.count, unsafe bytes[digest.end] == UInt8(ascii: ":") {
            index = digest.end + 1
            return .words(digest.w0, digest.w1, digest.w2, digest.w3)
        }
        let span = try scanString(expectingKey: true)
        try expectColon()
        return prefixedHex256(span, prefix: prefix)
    }

    private func prefixedHex256(_ span: StringSpan, prefix: StaticString) -> PrefixedHex256 {
        let prefixCount = prefix.utf8CodeUnitCount
        // Escaped digests (legal, never written) take the byte-by-byte path.
        if !span.escaped, span.count == prefixCount + 64,
            equals(StringSpan(start: span.start, count: prefixCount, escaped: false), prefix)
        {
            let hex = span.start + prefixCount
            if let (w0, w1, w2, w3) = unsafe Hex.words256(bytes.bytes, at: hex) { return .words(w0, w1, w2, w3) }
            return .other(string(span))
        }
        switch prefixedHex(span, prefix: prefix, digits: 64) {
        case .other(let text): return .other(text)
        case .hex(let hex):
            // `prefixedHex` checked the digits.
            guard let (w0, w1, w2, w3) = unsafe Hex.words256(hex.utf8.span.bytes) else { return .other(string(span)) }
            return .words(w0, w1, w2, w3)
        }
    }

    /// The fast path of a string that is exactly `prefix` and 64 lower-case hex digits, written
    /// without escapes, starting at `position` (its opening quote): the digits as four words and
    /// the offset after the closing quote; nil for anything else, which the callers then read the
    /// general way. Such a string needs no other checks: every byte is plain ASCII.
    private func plainHex256(at position: Int, prefix: StaticString) -> (w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64, end: Int)? {
        let prefixCount = prefix.utf8CodeUnitCount
        let hex = position + 1 + prefixCount
        let close = hex + 64
        guard unsafe close < bytes.count, unsafe bytes[position] == UInt8(ascii: "\""), unsafe bytes[close] == UInt8(ascii: "\"") else { return nil }
        if prefixCount == 7 {
            // The quote and a 7-byte prefix (`sha256:`) are one word.
            let word = unsafe UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self))
            var expected = UInt64(UInt8(ascii: "\""))
            for offset in 0..<7 { unsafe expected |= UInt64(prefix.utf8Start[offset]) << (UInt64(offset + 1) * 8) }
            guard word == expected else { return nil }
        } else {
            for offset in 0..<prefixCount where unsafe bytes[position + 1 + offset] != prefix.utf8Start[offset] { return nil }
        }
        guard let (w0, w1, w2, w3) = unsafe Hex.words256(bytes.bytes, at: hex) else { return nil }
        return (w0, w1, w2, w3, close + 1)
    }

    /// The fast path of a compact array of digest strings (see `plainHex256`), each appended to
    /// `buffer` as `make` builds it from the four words: true with the scanner past the array;
    /// false, with nothing consumed and `buffer` as it was, for anything else.
    mutating func readPlainHex256Array<Element>(
        prefix: StaticString, into buffer: inout [Element],
        _ make: (UInt64, UInt64, UInt64, UInt64) -> Element
    ) -> Bool {
        guard
            let end = compactArrayEnd(
                into: &buffer,
                { position in
                    plainHex256(at: position, prefix: prefix).map { (make($0.w0, $0.w1, $0.w2, $0.w3), $0.end) }
                })
        else { return false }
        index = end
        return true
    }

    /// The fast path of a compact array of plain decimals (see `plainDecimal`), appended to
    /// `buffer`: true with the scanner past the array; false, with nothing consumed and `buffer` as
    /// it was, for anything else.
    mutating func readPlainDecimalArray(into buffer: inout [Double]) -> Bool {
        guard let end = compactArrayEnd(into: &buffer, { position in plainDecimal(at: position) }) else { return false }
        index = end
        return true
    }

    /// Reads a compact array (no whitespace) at the scanner's position whose elements `element` reads
    /// at a position, giving the value and the position after it; appends the values to `buffer` and
    /// returns the position past the array. Nil, with `buffer` as it was, when `element` declines
    /// one or the array is not compact. The scanner itself does not move.
    private func compactArrayEnd<Element>(into buffer: inout [Element], _ element: (Int) -> (Element, Int)?) -> Int? {
        let first = buffer.count
        guard depth < JSONScanner.maxDepth, unsafe index + 1 < bytes.count, unsafe bytes[index] == UInt8(ascii: "[") else { return nil }
        var position = index + 1
        if unsafe bytes[position] == UInt8(ascii: "]") { return position + 1 }
        while let (value, end) = element(position), unsafe end < bytes.count {
            buffer.append(value)
            position = end + 1
            if unsafe bytes[end] == UInt8(ascii: "]") { return position }
            if unsafe bytes[end] != UInt8(ascii: ",") { break }
        }
        buffer.removeSubrange(first...)
        return nil
    }

    /// What `prefixedHex` found.
    private enum PrefixedHex {
        /// The hex digits after the prefix.
        case hex(String)
        /// A string of another shape, as written.
        case other(String)
    }

    /// The general path of `prefixedHex256` (escaped digests): `prefix` followed by exactly
    /// `digits` lower-case hex digits, checked byte by byte.
    private func prefixedHex(_ span: StringSpan, prefix: StaticString, digits: Int) -> PrefixedHex {
        let prefixCount = prefix.utf8CodeUnitCount
        guard span.count == prefixCount + digits,
            equals(StringSpan(start: span.start, count: prefixCount, escaped: span.escaped), prefix)
        else { return .other(string(span)) }
        let hex = StringSpan(start: span.start + prefixCount, count: digits, escaped: span.escaped)
        for position in 0..<digits where Hex.value(of: byte(of: hex, at: position)) == nil { return .other(string(span)) }
        return .hex(string(hex))
    }

    /// The fast path of a compact object of plain integers under distinct plain-integer keys
    /// (`{"4096":8192,"512":7680}`, the shape of size tables): appends the pairs to `pairs` and
    /// returns true, with the scanner past the object. For anything else (whitespace, signs,
    /// fractions, a repeated key, bad syntax) returns false with nothing consumed and `pairs` as it
    /// was; the caller then reads the object the general way, which reports whatever is wrong.
    mutating func readPlainIntegerObject(into pairs: inout [(key: Int64, value: Int64)]) -> Bool {
        let first = pairs.count
        var position = index
        // Keys already read that are powers of two (block sizes), one bit each: a repeat is found
        // without comparing with every pair; other keys are compared with every pair.
        var powersOfTwo: UInt64 = 0
        guard depth < JSONScanner.maxDepth, unsafe position + 1 < bytes.count, unsafe bytes[position] == UInt8(ascii: "{") else { return false }
        position += 1
        if unsafe bytes[position] == UInt8(ascii: "}") {
            index = position + 1
            return true
        }
        while true {
            guard unsafe position + 1 < bytes.count, unsafe bytes[position] == UInt8(ascii: "\""), unsafe bytes[position + 1] != UInt8(ascii: "0"),
                let key = plainInteger(at: position + 1),
                unsafe key.end + 1 < bytes.count, unsafe bytes[key.end] == UInt8(ascii: "\""), unsafe bytes[key.end + 1] == UInt8(ascii: ":"),
                let value = plainInteger(at: key.end + 2), unsafe value.end < bytes.count
            else { break }
            if key.value > 0 && key.value & (key.value - 1) == 0 {
                let bit: UInt64 = 1 << UInt64(key.value.trailingZeroBitCount)
                if powersOfTwo & bit != 0 { break }
                powersOfTwo |= bit
            } else if pairs[first...].contains(where: { $0.key == key.value }) {
                break
            }
            pairs.append((key.value, value.value))
            position = value.end + 1
            switch unsafe bytes[value.end] {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "}"):
                index = position
                return true
            default: break
            }
            break
        }
        pairs.removeSubrange(first...)
        return false
    }

    /// 1 to 18 digits at `position` without a sign or a leading zero (or a lone `0`): a value that
    /// cannot overflow, and where they end.
    @inline(__always)
    private func plainInteger(at position: Int) -> (value: Int64, end: Int)? {
        guard unsafe position < bytes.count else { return nil }
        if unsafe bytes[position] == UInt8(ascii: "0") {
            return unsafe position + 1 < bytes.count && bytes[position + 1] &- UInt8(ascii: "0") < 10 ? nil : (0, position + 1)
        }
        var value: Int64 = 0
        var end = position
        // Up to eight digits at once (SWAR), when eight bytes are there to load.
        if unsafe bytes.count - position >= 8 {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let word = unsafe UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self))
            // A digit byte has high nibble 3, and so has the byte plus 6; a carry out of a
            // non-digit byte only disturbs the bytes after it.
            let digitTest = ((word & (ones &* 0xF0)) | (((word &+ ones &* 0x06) & (ones &* 0xF0)) >> 4)) ^ (ones &* 0x33)
            let nonDigits = (((digitTest & (ones &* 0x7F)) &+ ones &* 0x7F) | digitTest) & (ones &* 0x80)
            let count = nonDigits == 0 ? 8 : nonDigits.trailingZeroBitCount / 8
            guard count > 0 else { return nil }
            // The digits moved to the top bytes (leading zeros below), then combined pairwise.
            var digits = (word & (ones &* 0x0F)) << (UInt64(8 - count) * 8)
            digits = (digits &* 10 &+ (digits >> 8)) & 0x00FF_00FF_00FF_00FF
            digits = (digits &* 100 &+ (digits >> 16)) & 0x0000_FFFF_0000_FFFF
            digits = (digits &* 10_000 &+ (digits >> 32)) & 0x0000_0000_FFFF_FFFF
            value = Int64(digits)
            end = position + count
            if count < 8 { return (value, end) }
        }
        let limit = unsafe min(bytes.count, position + 18)
        while end < limit {
            let digit = unsafe bytes[end] &- UInt8(ascii: "0")
            guard digit < 10 else { break }
            value = value &* 10 &+ Int64(digit)
            end += 1
        }
        return end > position ? (value, end) : nil
    }

    /// A number `-?(0|[1-9][0-9]*)(\.[0-9]+)?` with at most 15 significant digits and 22 decimals,
    /// which one exact division turns into the correctly rounded Double (Clinger's fast path, as
    /// `fastDouble` computes it), and where it ends; nil for any other number or text.
    private func plainDecimal(at start: Int) -> (Double, Int)? {
        var position = start
        let negative = unsafe position < bytes.count && bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        guard unsafe position < bytes.count, unsafe bytes[position] &- UInt8(ascii: "0") < 10 else { return nil }
        var mantissa: UInt64 = 0
        var significant = 0
        var fractionDigits = 0
        if unsafe bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else {
            while unsafe position < bytes.count, unsafe bytes[position] &- UInt8(ascii: "0") < 10 {
                mantissa = unsafe mantissa &* 10 &+ UInt64(bytes[position] &- UInt8(ascii: "0"))
                significant += 1
                guard significant <= 15 else { return nil }
                position += 1
            }
        }
        if unsafe position < bytes.count, unsafe bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard unsafe position < bytes.count, unsafe bytes[position] &- UInt8(ascii: "0") < 10 else { return nil }
            while unsafe position < bytes.count, unsafe bytes[position] &- UInt8(ascii: "0") < 10 {
                let digit = unsafe bytes[position] &- UInt8(ascii: "0")
                if mantissa != 0 || digit != 0 { significant += 1 }
                mantissa = mantissa &* 10 &+ UInt64(digit)
                fractionDigits += 1
                guard significant <= 15, fractionDigits <= 22 else { return nil }
                position += 1
            }
        }
        // An exponent, or anything that would make the number invalid, takes the general path.
        if unsafe position < bytes.count, unsafe continuesNumber(bytes[position]) { return nil }
        var value = Double(mantissa)
        if fractionDigits > 0 { value /= JSONScanner.powersOfTen[fractionDigits] }
        return (negative ? -value : value, position)
    }

    /// Reads `true` or `false`.
    mutating func readBool() throws(Failure) -> Bool {
        try requireKind(.bool)
        if unsafe bytes[index] == UInt8(ascii: "t") {
            try expectLiteral("true")
            return true
        }
        try expectLiteral("false")
        return false
    }

    /// Reads a number that must be an integer in Int64's range (`1e3` and `2.0` count, as they do
    /// for `JSONDecoder`).
    mutating func readInt64() throws(Failure) -> Int64 {
        skipWhitespace()
        // The shape of every size, digits without sign or leading zero, in one pass; anything
        // else, errors included, goes the general way.
        if let (value, end) = plainInteger(at: index), unsafe end == bytes.count || !continuesNumber(bytes[end]) {
            index = end
            return value
        }
        try requireKind(.number)
        let start = index
        let number = try scanNumber()
        if number.isPlainInteger {
            var value: Int64 = 0
            var position = number.start + (number.negative ? 1 : 0)
            while position < number.end {
                let digit = unsafe Int64(bytes[position] &- UInt8(ascii: "0"))
                let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (next, overflow2) = number.negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
                guard !overflow1, !overflow2 else { throw Failure(offset: start, reason: "number \(text(number)) does not fit in a 64-bit integer") }
                value = next
                position += 1
            }
            return value
        }
        let double = slowDouble(number)
        guard let value = Int64(exactly: double) else {
            throw Failure(offset: start, reason: "number \(text(number)) is not an integer that fits in 64 bits")
        }
        return value
    }

    /// Reads a number as a Double, correctly rounded; out-of-range numbers are an error.
    mutating func readDouble() throws(Failure) -> Double {
        skipWhitespace()
        // Coordinates' shape, `-12.345`, in one pass; the same exact arithmetic as `fastDouble`.
        if let (value, end) = plainDecimal(at: index) {
            index = end
            return value
        }
        try requireKind(.number)
        let start = index
        let number = try scanNumber()
        let value = fastDouble(number) ?? slowDouble(number)
        guard value.isFinite else { throw Failure(offset: start, reason: "number \(text(number)) is out of range for a Double") }
        return value
    }

    // MARK: Errors

    /// A failure at the current position.
    func failure(_ reason: String) -> Failure { Failure(offset: index, reason: reason) }

    /// A failure saying the next value has the wrong type.
    mutating func mismatch(expected: String) -> Failure {
        let found = (try? peekKind()).map(\.description) ?? "no value"
        return failure("expected \(expected), found \(found)")
    }

    /// 1-based line and column (in characters) of `offset`, for messages.
    func location(of offset: Int) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for position in unsafe 0..<min(offset, bytes.count) {
            let byte = unsafe bytes[position]
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }

    // MARK: Internals

    /// Where a string's content is: in the input (no escapes), or decoded in `scratch`.
    private struct StringSpan {
        var start: Int
        var count: Int
        var escaped: Bool
    }

    /// A number's bytes and shape, already checked against JSON's grammar.
    private struct NumberSpan {
        var start: Int
        var end: Int
        var negative: Bool
        var isPlainInteger: Bool
    }

    private mutating func skipWhitespace() {
        while unsafe index < bytes.count {
            switch unsafe bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func requireKind(_ kind: ValueKind) throws(Failure) {
        let found = try peekKind()
        guard found == kind else { throw failure("expected \(kind), found \(found)") }
    }

    private mutating func open(_ kind: ValueKind, _ byte: UInt8) throws(Failure) {
        try requireKind(kind)
        guard depth < JSONScanner.maxDepth else { throw failure("arrays and objects nest deeper than \(JSONScanner.maxDepth) levels") }
        depth += 1
        index += 1
    }

    private mutating func nextItem(first: inout Bool, close: UInt8, container: String) throws(Failure) -> Bool {
        skipWhitespace()
        guard unsafe index < bytes.count else { throw failure("unexpected end of input inside an \(container); the file is truncated") }
        let byte = unsafe bytes[index]
        if byte == close {
            index += 1
            depth -= 1
            return false
        }
        if first {
            first = false
            return true
        }
        guard byte == UInt8(ascii: ",") else {
            throw failure("expected ',' or '\(Character(Unicode.Scalar(close)))' in an \(container), found \(describeByte(at: index))")
        }
        index += 1
        skipWhitespace()
        // A trailing comma is not JSON.
        if unsafe index < bytes.count, unsafe bytes[index] == close { throw failure("unexpected '\(Character(Unicode.Scalar(close)))' after ','") }
        return true
    }

    private mutating func expectColon() throws(Failure) {
        skipWhitespace()
        guard unsafe index < bytes.count, unsafe bytes[index] == UInt8(ascii: ":") else {
            throw failure("expected ':' after an object key, found \(describeByte(at: index))")
        }
        index += 1
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(Failure) {
        let count = literal.utf8CodeUnitCount
        guard unsafe bytes.count - index >= count else { throw failure("unexpected end of input; the file is truncated") }
        let expected = unsafe UnsafeRawBufferPointer(start: literal.utf8Start, count: count)
        for position in 0..<count where unsafe bytes[index + position] != expected[position] {
            throw failure("invalid literal; expected '\(literal)'")
        }
        index += count
        // `nullx` is not `null` followed by something valid.
        if unsafe index < bytes.count, unsafe isIdentifierByte(bytes[index]) { throw failure("invalid literal; expected '\(literal)'") }
    }

    /// True for a byte that would make the digits before it part of a longer number, or of an
    /// invalid token: a digit, `.`, or a letter (`e`, `E`, and the junk `scanNumber` refuses).
    private func continuesNumber(_ byte: UInt8) -> Bool {
        isIdentifierByte(byte) || byte == UInt8(ascii: ".")
    }

    private func isIdentifierByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }

    private func describeByte(at position: Int) -> String {
        guard unsafe position < bytes.count else { return "end of input" }
        let byte = unsafe bytes[position]
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x" + String(byte, radix: 16, uppercase: true)
    }

    /// Scans a string starting at its opening quote: checks escapes, control characters and
    /// UTF-8, and says where its decoded bytes are.
    private mutating func scanString(expectingKey: Bool) throws(Failure) -> StringSpan {
        skipWhitespace()
        guard unsafe index < bytes.count, unsafe bytes[index] == UInt8(ascii: "\"") else {
            throw failure(
                expectingKey ? "expected a string key, found \(describeByte(at: index))" : "expected a string, found \(describeByte(at: index))")
        }
        let opening = index
        index += 1
        let start = index
        // Eight bytes at a time up to the first quote, backslash or control character (SWAR);
        // non-ASCII bytes do not stop the run, they only mark the string for UTF-8 validation.
        let ones: UInt64 = 0x0101_0101_0101_0101
        var highBits: UInt64 = 0
        while unsafe bytes.count - index >= 8 {
            let word = unsafe UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
            let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
            // The usual "has a zero byte" and "has a byte below 0x20" tests. They misfire only on
            // bytes above one that really matches, so the lowest flagged byte is the stop.
            let stops = (((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word)) & (ones &* 0x80)
            if stops != 0 {
                let before = stops.trailingZeroBitCount / 8
                highBits |= word & ((1 << (UInt64(before) * 8)) &- 1)
                index += before
                break
            }
            highBits |= word
            index += 8
        }
        var ascii = highBits & (ones &* 0x80) == 0
        while unsafe index < bytes.count {
            let byte = unsafe bytes[index]
            if byte == UInt8(ascii: "\"") {
                if !ascii { try validateUTF8(start..<index, reportingAt: opening) }
                index += 1
                return StringSpan(start: start, count: index - 1 - start, escaped: false)
            }
            if byte == UInt8(ascii: "\\") {
                if !ascii { try validateUTF8(start..<index, reportingAt: opening) }
                return try scanEscapedString(from: start, opening: opening)
            }
            if byte < 0x20 { throw failure("control character \(describeByte(at: index)) inside a string; escape it") }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        throw Failure(offset: opening, reason: "unterminated string; the file is truncated")
    }

    /// The slow path of `scanString`: decodes into `scratch` from the first backslash on.
    private mutating func scanEscapedString(from start: Int, opening: Int) throws(Failure) -> StringSpan {
        scratch.removeAll(keepingCapacity: true)
        unsafe scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        var rawStart = index
        var ascii = true
        while unsafe index < bytes.count {
            let byte = unsafe bytes[index]
            if byte == UInt8(ascii: "\"") {
                if !ascii { try validateUTF8(rawStart..<index, reportingAt: opening) }
                index += 1
                return StringSpan(start: 0, count: scratch.count, escaped: true)
            }
            if byte == UInt8(ascii: "\\") {
                if !ascii { try validateUTF8(rawStart..<index, reportingAt: opening) }
                ascii = true
                try decodeEscape()
                rawStart = index
                continue
            }
            if byte < 0x20 { throw failure("control character \(describeByte(at: index)) inside a string; escape it") }
            if byte >= 0x80 { ascii = false }
            scratch.append(byte)
            index += 1
        }
        throw Failure(offset: opening, reason: "unterminated string; the file is truncated")
    }

    /// Decodes the escape at `index` (a backslash) into `scratch`.
    private mutating func decodeEscape() throws(Failure) {
        let escapeStart = index
        guard unsafe index + 1 < bytes.count else { throw failure("unterminated string; the file is truncated") }
        let letter = unsafe bytes[index + 1]
        index += 2
        let simple: UInt8? =
            switch letter {
            case UInt8(ascii: "\""): 0x22
            case UInt8(ascii: "\\"): 0x5C
            case UInt8(ascii: "/"): 0x2F
            case UInt8(ascii: "b"): 0x08
            case UInt8(ascii: "f"): 0x0C
            case UInt8(ascii: "n"): 0x0A
            case UInt8(ascii: "r"): 0x0D
            case UInt8(ascii: "t"): 0x09
            default: nil
            }
        if let simple {
            scratch.append(simple)
            return
        }
        guard letter == UInt8(ascii: "u") else {
            throw Failure(offset: escapeStart, reason: "invalid escape \(describeByte(at: escapeStart + 1)) in a string")
        }
        var scalar = try readHex4(escapeStart)
        if scalar >= 0xD800 && scalar < 0xDC00 {
            // A high surrogate must be followed by an escaped low one; together they are one scalar.
            guard unsafe index + 1 < bytes.count, unsafe bytes[index] == UInt8(ascii: "\\"), unsafe bytes[index + 1] == UInt8(ascii: "u") else {
                throw Failure(offset: escapeStart, reason: "unpaired UTF-16 surrogate \\u\(String(scalar, radix: 16, uppercase: true)) in a string")
            }
            let lowStart = index
            index += 2
            let low = try readHex4(lowStart)
            guard low >= 0xDC00 && low < 0xE000 else {
                throw Failure(offset: escapeStart, reason: "unpaired UTF-16 surrogate \\u\(String(scalar, radix: 16, uppercase: true)) in a string")
            }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if scalar >= 0xDC00 && scalar < 0xE000 {
            throw Failure(offset: escapeStart, reason: "unpaired UTF-16 surrogate \\u\(String(scalar, radix: 16, uppercase: true)) in a string")
        }
        appendUTF8(scalar)
    }

    private mutating func readHex4(_ escapeStart: Int) throws(Failure) -> UInt32 {
        guard unsafe bytes.count - index >= 4 else { throw failure("unterminated string; the file is truncated") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = unsafe Hex.value(of: bytes[index], letters: .anyCase) else {
                throw Failure(offset: escapeStart, reason: "invalid \\u escape; expected 4 hex digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case ..<0x80:
            scratch.append(UInt8(scalar))
        case ..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case ..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// Checks `range` is well-formed UTF-8 (no overlongs, surrogates or scalars past U+10FFFF).
    private func validateUTF8(_ range: Range<Int>, reportingAt opening: Int) throws(Failure) {
        var position = range.lowerBound
        let end = range.upperBound
        func invalid(_ at: Int) -> Failure {
            Failure(offset: at, reason: unsafe "invalid UTF-8 in a string (byte 0x\(String(bytes[at], radix: 16, uppercase: true)))")
        }
        func continuation(_ at: Int) -> Bool { unsafe at < end && bytes[at] & 0xC0 == 0x80 }
        while position < end {
            let lead = unsafe bytes[position]
            if lead < 0x80 {
                position += 1
                continue
            }
            let length: Int
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0...0xEF: length = 3
            case 0xF0...0xF4: length = 4
            default: throw invalid(position)
            }
            for offset in 1..<length where !continuation(position + offset) { throw invalid(position) }
            let second = unsafe bytes[position + 1]
            switch lead {
            case 0xE0 where second < 0xA0, 0xED where second > 0x9F, 0xF0 where second < 0x90, 0xF4 where second > 0x8F:
                throw invalid(position)
            default: break
            }
            position += length
        }
    }

    private func byte(of span: StringSpan, at position: Int) -> UInt8 {
        unsafe span.escaped ? scratch[span.start + position] : bytes[span.start + position]
    }

    /// A span of at most 16 bytes as two little-endian words, zero-padded (see `JSONKeys`).
    private func words(of span: StringSpan) -> (UInt64, UInt64) {
        if !span.escaped, unsafe bytes.count - span.start >= 16 {
            // Whole-word loads, then the bytes past the span masked off.
            var first = unsafe UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: span.start, as: UInt64.self))
            var second = unsafe UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: span.start + 8, as: UInt64.self))
            if span.count < 8 {
                first &= (1 << (UInt64(span.count) * 8)) &- 1
                second = 0
            } else if span.count < 16 {
                second &= (1 << (UInt64(span.count - 8) * 8)) &- 1
            }
            return (first, second)
        }
        var first: UInt64 = 0
        var second: UInt64 = 0
        for position in 0..<span.count {
            let value = UInt64(byte(of: span, at: position))
            if position < 8 { first |= value << (UInt64(position) * 8) } else { second |= value << (UInt64(position - 8) * 8) }
        }
        return (first, second)
    }

    private func equals(_ span: StringSpan, _ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard span.count == count else { return false }
        let expected = unsafe UnsafeRawBufferPointer(start: literal.utf8Start, count: count)
        for position in 0..<count where unsafe byte(of: span, at: position) != expected[position] { return false }
        return true
    }

    private func string(_ span: StringSpan) -> String {
        if span.escaped {
            return String(decoding: scratch[span.start..<(span.start + span.count)], as: UTF8.self)
        }
        return unsafe String(decoding: UnsafeRawBufferPointer(rebasing: bytes[span.start..<(span.start + span.count)]), as: UTF8.self)
    }

    /// Scans a number against JSON's grammar: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    private mutating func scanNumber() throws(Failure) -> NumberSpan {
        let start = index
        var negative = false
        if unsafe index < bytes.count, unsafe bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        func isDigit(_ at: Int) -> Bool { unsafe at < bytes.count && bytes[at] >= UInt8(ascii: "0") && bytes[at] <= UInt8(ascii: "9") }
        guard isDigit(index) else { throw failure("invalid number; expected a digit, found \(describeByte(at: index))") }
        if unsafe bytes[index] == UInt8(ascii: "0") {
            index += 1
            if isDigit(index) { throw Failure(offset: start, reason: "invalid number; leading zeros are not JSON") }
        } else {
            while isDigit(index) { index += 1 }
        }
        var plain = true
        if unsafe index < bytes.count, unsafe bytes[index] == UInt8(ascii: ".") {
            plain = false
            index += 1
            guard isDigit(index) else { throw failure("invalid number; expected a digit after '.', found \(describeByte(at: index))") }
            while isDigit(index) { index += 1 }
        }
        if unsafe index < bytes.count, unsafe bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            plain = false
            index += 1
            if unsafe index < bytes.count, unsafe bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard isDigit(index) else { throw failure("invalid number; expected a digit in the exponent, found \(describeByte(at: index))") }
            while isDigit(index) { index += 1 }
        }
        if unsafe index < bytes.count, unsafe isIdentifierByte(bytes[index]) || bytes[index] == UInt8(ascii: ".") {
            throw failure("invalid number; unexpected \(describeByte(at: index))")
        }
        return NumberSpan(start: start, end: index, negative: negative, isPlainInteger: plain)
    }

    private func text(_ number: NumberSpan) -> String {
        let shown = min(number.end - number.start, 40)
        let prefix = unsafe String(decoding: UnsafeRawBufferPointer(rebasing: bytes[number.start..<(number.start + shown)]), as: UTF8.self)
        return shown < number.end - number.start ? prefix + "…" : prefix
    }

    private static let powersOfTen: [Double] = (0...22).map { exponent in
        var value = 1.0
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    /// Clinger's fast path: with at most 15 significant digits and a small power of ten, one
    /// exact multiplication or division gives the correctly rounded result.
    private func fastDouble(_ number: NumberSpan) -> Double? {
        var mantissa: UInt64 = 0
        var digits = 0
        var fractionDigits = 0
        var position = number.start + (number.negative ? 1 : 0)
        var inFraction = false
        while position < number.end {
            let byte = unsafe bytes[position]
            if byte == UInt8(ascii: ".") {
                inFraction = true
                position += 1
                continue
            }
            if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { break }
            if mantissa != 0 || byte != UInt8(ascii: "0") { digits += 1 }
            guard digits <= 15 else { return nil }
            mantissa = mantissa * 10 + UInt64(byte - UInt8(ascii: "0"))
            if inFraction { fractionDigits += 1 }
            position += 1
        }
        var exponent = 0
        if position < number.end {
            position += 1
            var exponentNegative = false
            if unsafe bytes[position] == UInt8(ascii: "+") {
                position += 1
            } else if unsafe bytes[position] == UInt8(ascii: "-") {
                exponentNegative = true
                position += 1
            }
            while position < number.end {
                exponent = unsafe exponent * 10 + Int(bytes[position] - UInt8(ascii: "0"))
                guard exponent < 1000 else { return nil }
                position += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        exponent -= fractionDigits
        guard exponent >= -22 && exponent <= 22 else { return mantissa == 0 ? (number.negative ? -0.0 : 0.0) : nil }
        var value = Double(mantissa)
        value = exponent >= 0 ? value * JSONScanner.powersOfTen[exponent] : value / JSONScanner.powersOfTen[-exponent]
        return number.negative ? -value : value
    }

    /// Any number, correctly rounded by the standard library's parser (strtod).
    private func slowDouble(_ number: NumberSpan) -> Double {
        let text = unsafe String(decoding: UnsafeRawBufferPointer(rebasing: bytes[number.start..<number.end]), as: UTF8.self)
        return Double(text) ?? .nan
    }
}

/// Small JSON documents read with `JSONScanner` where `JSONDecoder`'s per-document setup would
/// dominate (thousands of short documents, such as a region row's names read at every store open).
package enum JSONStrings {
    /// The members of a JSON object whose values are all strings; nil when `text` is anything else
    /// (not JSON, another value kind, a duplicate key, text after the object).
    package static func object(_ text: String) -> [String: String]? {
        var text = text
        return text.withUTF8 { utf8 -> [String: String]? in
            var scanner = unsafe JSONScanner(UnsafeRawBufferPointer(utf8))
            var members: [String: String] = [:]
            // A region's names: about a dozen languages, stored without growing the table on the way.
            members.reserveCapacity(16)
            do {
                try scanner.beginObject()
                var first = true
                while try scanner.nextMember(first: &first) {
                    let key = try scanner.readKeyString()
                    guard members.updateValue(try scanner.readString(), forKey: key) == nil else { return nil }
                }
                try scanner.expectEnd()
            } catch {
                return nil
            }
            return members
        }
    }
}

extension JSONScanner {
    /// The first key repeated within one object anywhere in `data` (with the byte offset of its second
    /// occurrence), nil when there is none or when `data` is not JSON (the decoder reports that).
    /// Readers disagree on a repeated key (some keep the first, others the last), so a document
    /// that has one means two things and is refused wherever it is read.
    static func firstDuplicateKey(in data: Data) -> (key: String, offset: Int)? {
        unsafe data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> (key: String, offset: Int)? in
            var scanner = unsafe JSONScanner(raw)
            do throws(Failure) {
                return try scanner.duplicateKeyInValue()
            } catch {
                return nil
            }
        }
    }

    /// Walks one value (objects and arrays recursively, depth bounded by `open`).
    private mutating func duplicateKeyInValue() throws(Failure) -> (key: String, offset: Int)? {
        switch try peekKind() {
        case .object:
            try beginObject()
            var first = true
            var keys = Set<String>()
            while try nextMember(first: &first) {
                let key = try readKeyString()
                guard keys.insert(key).inserted else { return (key, offset) }
                if let found = try duplicateKeyInValue() { return found }
            }
        case .array:
            try beginArray()
            var first = true
            while try nextElement(first: &first) {
                if let found = try duplicateKeyInValue() { return found }
            }
        default:
            try skipValue()
        }
        return nil
    }
}
