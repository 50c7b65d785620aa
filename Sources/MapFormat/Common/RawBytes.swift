import Foundation

/// Comparing and searching bytes held in spans, through libc's `memcmp` and `memchr`: the one place
/// outside the C wrappers that hands span memory to C. Callers pass `RawSpan`s (`array.span.bytes`,
/// `string.utf8.span.bytes`), which carry their bounds, instead of raw pointers.
package enum RawBytes {
    /// Bytewise order of `a` and `b` (negative, zero, positive), a prefix first.
    @inlinable
    package static func compare(_ a: RawSpan, _ b: RawSpan) -> Int {
        let common = min(a.byteCount, b.byteCount)
        if common > 0 {
            let order = unsafe a.withUnsafeBytes { a in unsafe b.withUnsafeBytes { b in unsafe memcmp(a.baseAddress!, b.baseAddress!, common) } }
            if order != 0 { return Int(order) }
        }
        return a.byteCount - b.byteCount
    }

    /// True when `bytes` holds `expected` at `offset` (false when it would run past the end).
    @inlinable
    package static func matches(_ expected: RawSpan, in bytes: RawSpan, at offset: Int) -> Bool {
        guard offset >= 0, offset <= bytes.byteCount - expected.byteCount else { return false }
        return compare(bytes.extracting(offset..<(offset + expected.byteCount)), expected) == 0
    }

    /// `firstIndex` in UTF-8 text's bytes (`string.utf8.span`; `Span.bytes` is unsafe on Swift 6.3).
    @inlinable
    package static func firstIndex(of byte: UInt8, in bytes: Span<UInt8>, from: Int, to: Int) -> Int? {
        unsafe firstIndex(of: byte, in: bytes.bytes, from: from, to: to)
    }

    /// The eight bytes of `bytes` at `offset` as a little-endian word (the first byte lowest); the
    /// span's bounds are checked (`Span.bytes` is unsafe on Swift 6.3).
    @inlinable
    package static func word(_ bytes: Span<UInt8>, at offset: Int) -> UInt64 {
        precondition(offset >= 0 && offset <= bytes.count - 8, "eight bytes past the span's end")
        return unsafe UInt64(littleEndian: bytes.bytes.unsafeLoadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// The offset of the first `byte` in `bytes[from..<to]`, or nil.
    @inlinable
    package static func firstIndex(of byte: UInt8, in bytes: RawSpan, from: Int, to: Int) -> Int? {
        precondition(from >= 0 && from <= to && to <= bytes.byteCount, "range outside the span")
        guard from < to else { return nil }
        return unsafe bytes.withUnsafeBytes { raw -> Int? in
            guard let found = unsafe memchr(raw.baseAddress! + from, Int32(byte), to - from) else { return nil }
            return unsafe UnsafeRawPointer(found) - raw.baseAddress!
        }
    }

    /// Appends the bytes to `data`.
    @inlinable
    package static func append(_ bytes: RawSpan, to data: inout Data) {
        unsafe bytes.withUnsafeBytes { unsafe data.append(contentsOf: $0) }
    }

    /// The bytes as a string (invalid UTF-8 repaired, as `String(decoding:as:)` does).
    @inlinable
    package static func string(_ bytes: RawSpan) -> String {
        unsafe bytes.withUnsafeBytes { unsafe String(decoding: $0, as: UTF8.self) }
    }
}

extension RawSpan {
    /// The byte at `offset`; an offset outside the span traps.
    @inlinable
    package subscript(byteAt offset: Int) -> UInt8 { unsafe unsafeLoad(fromByteOffset: offset, as: UInt8.self) }
}

extension RawBytes {
    /// Eight bytes in one little-endian word (`RawBytes.word`), tested at once: each test looks at
    /// every byte, without a branch per byte.
    package enum Word {
        package static let ones: UInt64 = 0x0101_0101_0101_0101
        package static let highs: UInt64 = 0x8080_8080_8080_8080

        /// The top bit of each byte of `word` that equals `byte`, and only those (no borrow between bytes).
        @inlinable @inline(__always)
        package static func equal(_ word: UInt64, _ byte: UInt8) -> UInt64 {
            let value = word ^ (UInt64(byte) &* ones)
            return ~(((value & ~highs) &+ ~highs) | value) & highs
        }

        /// True when some byte of `word` is below `bound` (at most 0x80); which one is not told.
        @inlinable @inline(__always)
        package static func hasBelow(_ word: UInt64, _ bound: UInt8) -> Bool {
            (word &- UInt64(bound) &* ones) & ~word & highs != 0
        }
    }
}
