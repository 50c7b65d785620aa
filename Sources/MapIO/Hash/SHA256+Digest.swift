import MapFormat

extension SHA256 {
    /// A SHA-256 digest's 32 bytes, compared and stored without allocating; `hex` for people.
    package struct Digest: Hashable, Sendable, CustomStringConvertible {
        /// The 32 bytes in digest order, held as four words.
        var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

        init() {}

        /// Parses 64 lower-case hex digits (the form manifests record); nil for anything else,
        /// which then matches no digest.
        package init?(hex text: String) {
            guard let parsed = unsafe Digest.parse(text.utf8.span.bytes) else { return nil }
            self = parsed
        }

        /// Parses 64 lower-case hex digits given as UTF-8 bytes; nil for anything else.
        package init?(hex text: RawSpan) {
            guard let parsed = Digest.parse(text) else { return nil }
            self = parsed
        }

        private static func parse(_ hex: RawSpan) -> Digest? {
            guard let (w0, w1, w2, w3) = Hex.words256(hex) else { return nil }
            var digest = Digest()
            // Digest order in memory: the first two digits are the first byte.
            digest.bytes = (w0.bigEndian, w1.bigEndian, w2.bigEndian, w3.bigEndian)
            return digest
        }

        /// Lower-case hex.
        package var hex: String { Hex.encode(words: bytes.0.bigEndian, bytes.1.bigEndian, bytes.2.bigEndian, bytes.3.bigEndian) }

        package var description: String { hex }

        package static func == (a: Digest, b: Digest) -> Bool {
            a.bytes.0 == b.bytes.0 && a.bytes.1 == b.bytes.1 && a.bytes.2 == b.bytes.2 && a.bytes.3 == b.bytes.3
        }

        package func hash(into hasher: inout Hasher) {
            hasher.combine(bytes.0)
            hasher.combine(bytes.1)
            hasher.combine(bytes.2)
            hasher.combine(bytes.3)
        }
    }
}
