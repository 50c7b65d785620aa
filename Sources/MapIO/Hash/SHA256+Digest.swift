extension SHA256 {
    /// A SHA-256 digest's 32 bytes, compared and stored without allocating; `hex` for people.
    package struct Digest: Hashable, Sendable, CustomStringConvertible {
        /// The 32 bytes in digest order, held as four words.
        var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

        init() {}

        /// Parses 64 lower-case hex digits (the form manifests record); nil for anything else,
        /// which then matches no digest.
        package init?(hex text: String) {
            var text = text
            guard let parsed = text.withUTF8({ Digest.parse(UnsafeRawBufferPointer($0)) }) else { return nil }
            self = parsed
        }

        private static func parse(_ hex: UnsafeRawBufferPointer) -> Digest? {
            guard hex.count == 64 else { return nil }
            var digest = Digest()
            let ok = withUnsafeMutableBytes(of: &digest.bytes) { out -> Bool in
                for index in 0..<32 {
                    guard let high = nibble(hex[2 * index]), let low = nibble(hex[2 * index + 1]) else { return false }
                    out[index] = high << 4 | low
                }
                return true
            }
            return ok ? digest : nil
        }

        private static func nibble(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte &- UInt8(ascii: "a") &+ 10
            default: nil
            }
        }

        /// Lower-case hex.
        package var hex: String { withUnsafeBytes(of: bytes) { Hex.encode($0) } }

        package var description: String { hex }

        package static func == (a: Digest, b: Digest) -> Bool {
            a.bytes.0 == b.bytes.0 && a.bytes.1 == b.bytes.1 && a.bytes.2 == b.bytes.2 && a.bytes.3 == b.bytes.3
        }

        package func hash(into hasher: inout Hasher) {
            hasher.combine(bytes.0); hasher.combine(bytes.1); hasher.combine(bytes.2); hasher.combine(bytes.3)
        }
    }
}
