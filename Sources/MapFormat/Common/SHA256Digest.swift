/// A SHA-256 digest as mappack's files write it: 64 lower-case hex digits, checked once where it is
/// read (`init?(hex:)`, or decoding, which refuses anything else) and a type from then on. It is
/// written as the same string, so the files that hold one read and write byte for byte as before.
///
/// Stored as four 64-bit words (the first digit the top nibble of the first word), not as its
/// text: an image keeps one per file (10⁵ of them in a large one), and hashing or comparing one
/// costs a few instructions rather than a 64-character string on the heap.
public struct SHA256Digest: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    @usableFromInline let w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64

    /// The digest written as `hex`; nil unless it is exactly 64 lower-case hex digits.
    public init?(hex: String) {
        guard let parsed = Hex.words256(hex.utf8.span) else { return nil }
        (w0, w1, w2, w3) = parsed
    }

    /// Parses 64 lower-case hex digits given as UTF-8 bytes; nil for anything else.
    package init?(hex bytes: RawSpan) {
        guard let parsed = Hex.words256(bytes) else { return nil }
        (w0, w1, w2, w3) = parsed
    }

    /// Wraps the four 64-bit words of 64 hex digits already checked (`Hex.words256`), most
    /// significant first.
    package init(words w0: UInt64, _ w1: UInt64, _ w2: UInt64, _ w3: UInt64) {
        (self.w0, self.w1, self.w2, self.w3) = (w0, w1, w2, w3)
    }

    /// The digest of the 32 bytes a hasher gives, in their order.
    package init(bytes: (UInt64, UInt64, UInt64, UInt64)) {
        // In memory the first byte is the first two digits, which the words hold at the top.
        (w0, w1, w2, w3) = (UInt64(bigEndian: bytes.0), UInt64(bigEndian: bytes.1), UInt64(bigEndian: bytes.2), UInt64(bigEndian: bytes.3))
    }

    /// The 64 lower-case hex digits.
    public var hex: String { Hex.encode(words: w0, w1, w2, w3) }

    /// The 32 bytes, in digest order (a SQLite blob).
    package var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for word in [w0, w1, w2, w3] {
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        return out
    }

    /// Appends the 64 lower-case hex digits to `out` (a manifest entry being written).
    @inlinable
    public func appendHex<Bytes: RangeReplaceableCollection>(to out: inout Bytes) where Bytes.Element == UInt8 {
        out.append(contentsOf: hex.utf8)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let digest = SHA256Digest(hex: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not a SHA-256 digest (64 lower-case hex digits)")
        }
        self = digest
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }

    public func hash(into hasher: inout Hasher) {
        // Two words of a cryptographic digest are as good a key as four.
        hasher.combine(w0)
        hasher.combine(w1)
    }

    public var description: String { hex }

    public static func < (lhs: SHA256Digest, rhs: SHA256Digest) -> Bool { (lhs.w0, lhs.w1, lhs.w2, lhs.w3) < (rhs.w0, rhs.w1, rhs.w2, rhs.w3) }
}
