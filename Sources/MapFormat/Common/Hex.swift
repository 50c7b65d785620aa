/// Hex digits, read and written in one place: digests in catalogs, manifests, signatures and the
/// download cache, `\u` escapes in JSON, blobs in SQLite.
///
/// Digests are lower-case only wherever mappack reads them (`Letters.lowerCase`, the default), so
/// one digest has one spelling; `\u` escapes and `decode` take either case.
package enum Hex {
    /// Which letters count as hex digits.
    package enum Letters: Sendable {
        /// `0-9`, `a-f`.
        case lowerCase
        /// `0-9`, `a-f`, `A-F`.
        case anyCase
    }

    // MARK: Reading

    /// The value of one hex digit; nil for any other byte.
    @inline(__always)
    package static func value(of byte: UInt8, letters: Letters = .lowerCase) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F") where letters == .anyCase: byte &- UInt8(ascii: "A") &+ 10
        default: nil
        }
    }

    /// True when `bytes` are exactly `count` hex digits.
    package static func isDigits<Bytes: Collection>(_ bytes: Bytes, count: Int, letters: Letters = .lowerCase) -> Bool where Bytes.Element == UInt8 {
        var seen = 0
        for byte in bytes {
            guard seen < count, value(of: byte, letters: letters) != nil else { return false }
            seen += 1
        }
        return seen == count
    }

    /// The bytes `text` spells, two digits each, either case; nil for an odd count or another byte.
    package static func decode(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var position = 0
        while position < digits.count {
            guard let high = value(of: digits[position], letters: .anyCase), let low = value(of: digits[position + 1], letters: .anyCase) else {
                return nil
            }
            out.append(high << 4 | low)
            position += 2
        }
        return out
    }

    /// A SHA-256 digest's 64 lower-case digits as four words, the first digit the top nibble of
    /// the first word; nil for any other count or byte. Costs no allocation.
    package static func words256(_ digits: RawSpan) -> (UInt64, UInt64, UInt64, UInt64)? {
        guard digits.byteCount == 64 else { return nil }
        return words256(digits, at: 0)
    }

    /// `words256` of UTF-8 text's bytes (`string.utf8.span`): the one place such a span is seen as
    /// raw bytes (`Span.bytes` is unsafe on Swift 6.3), so its callers need no `unsafe`.
    package static func words256(_ digits: Span<UInt8>) -> (UInt64, UInt64, UInt64, UInt64)? {
        unsafe words256(digits.bytes)
    }

    /// `words256` of any collection of bytes: read in place when it is contiguous (a string's
    /// `utf8`, an array), else copied once.
    package static func words256<Bytes: Collection>(collection bytes: Bytes) -> (UInt64, UInt64, UInt64, UInt64)? where Bytes.Element == UInt8 {
        bytes.withContiguousStorageIfAvailable { unsafe words256($0.span) } ?? words256(Array(bytes).span)
    }

    /// `words256` of the 64 bytes at `offset` (bounds checked by the span: bytes missing there trap).
    @inline(__always)
    package static func words256(_ bytes: RawSpan, at offset: Int) -> (UInt64, UInt64, UInt64, UInt64)? {
        guard let w0 = word(bytes, at: offset), let w1 = word(bytes, at: offset + 16),
            let w2 = word(bytes, at: offset + 32), let w3 = word(bytes, at: offset + 48)
        else { return nil }
        return (w0, w1, w2, w3)
    }

    /// The value of the 16 lower-case digits at `offset` (the first digit is the top nibble);
    /// nil when any of them is not `0-9` or `a-f`. The span checks that the bytes are there.
    @inline(__always)
    package static func word(_ bytes: RawSpan, at offset: Int) -> UInt64? {
        let high = unsafe UInt64(littleEndian: bytes.unsafeLoadUnaligned(fromByteOffset: offset, as: UInt64.self))
        let low = unsafe UInt64(littleEndian: bytes.unsafeLoadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
        guard let first = eightDigits(high), let second = eightDigits(low) else { return nil }
        return UInt64(first) << 32 | UInt64(second)
    }

    /// Eight digits at once (SWAR), the first in the lowest byte: nibble = low four bits, plus 9
    /// for letters (bit 6 set); the digits are valid exactly when the nibbles, spelled again in
    /// lower-case hex, give back the same bytes.
    @inline(__always)
    private static func eightDigits(_ word: UInt64) -> UInt32? {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let nibbles = (word & (ones &* 0x0F)) &+ ((word >> 6) & ones) &* 9
        // Each byte's nibble is at most 24 here, so no lane carries into the next.
        guard (nibbles &+ ones &* 0x70) & (ones &* 0x80) == 0 else { return nil }
        let letters = ((nibbles &+ ones &* 0x76) >> 7) & ones
        guard nibbles &+ ones &* 0x30 &+ letters &* 0x27 == word else { return nil }
        // Gather the eight nibbles (first byte = most significant) into 32 bits.
        var packed = ((nibbles & 0x000F_000F_000F_000F) << 4) | ((nibbles & 0x0F00_0F00_0F00_0F00) >> 8)
        packed = ((packed & 0x0000_00FF_0000_00FF) << 8) | ((packed & 0x00FF_0000_00FF_0000) >> 16)
        packed = ((packed & 0x0000_0000_0000_FFFF) << 16) | ((packed & 0x0000_FFFF_0000_0000) >> 32)
        return UInt32(truncatingIfNeeded: packed)
    }

    // MARK: Writing

    /// Lower-case hex of `bytes`. Inlinable: every hashed file's digest is spelled through it
    /// (`SHA256.finalizeHex`), and a generic call across modules would not be specialized.
    @inlinable
    package static func encode<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        unsafe String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            var at = 0
            for byte in bytes {
                unsafe out[at] = digit(byte >> 4)
                unsafe out[at + 1] = digit(byte & 15)
                at += 2
            }
            return at
        }
    }

    /// Lower-case hex of four words, most significant digit first: `words256`'s inverse.
    package static func encode(words w0: UInt64, _ w1: UInt64, _ w2: UInt64, _ w3: UInt64) -> String {
        unsafe String(unsafeUninitializedCapacity: 64) { out in
            var at = 0
            for word in [w0, w1, w2, w3] {
                for shift in stride(from: 60, through: 0, by: -4) {
                    unsafe out[at] = digit(UInt8(truncatingIfNeeded: word >> UInt64(shift)) & 15)
                    at += 1
                }
            }
            return at
        }
    }

    /// The lower-case digit of a value below 16.
    @inlinable @inline(__always)
    package static func digit(_ value: UInt8) -> UInt8 { value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") - 10 + value }
}
