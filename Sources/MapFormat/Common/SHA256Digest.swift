/// A SHA-256 digest as mappack's files write it: 64 lower-case hex digits, checked once where it is
/// read (`init?(hex:)`, or decoding, which refuses anything else) and a type from then on. It is
/// written as the same string, so the files that hold one read and write byte for byte as before.
public struct SHA256Digest: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The 64 lower-case hex digits.
    public let hex: String

    /// The digest written as `hex`; nil unless it is exactly 64 lower-case hex digits.
    public init?(hex: String) {
        guard Hex.isDigits(hex.utf8, count: 64) else { return nil }
        self.hex = hex
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

    public var description: String { hex }
}
