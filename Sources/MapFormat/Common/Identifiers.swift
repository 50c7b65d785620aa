/// The id of a region in a catalog, e.g. `europe/ch/be`.
public struct RegionID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The id's text as the catalog spells it.
    public let rawValue: String

    /// Wraps a catalog id.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// Wraps a literal id.
    public init(stringLiteral value: String) { self.rawValue = value }
    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
    public var description: String { rawValue }
    public static func < (lhs: RegionID, rhs: RegionID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A bundle's content address: `sha256:` and the hex SHA-256 of its compressed bytes, the
/// `sha256:`-prefixed spelling of a `SHA256Digest` (four 64-bit words, so hashing and comparing a
/// digest, done for every bundle reference of a planet-sized catalog, costs a few instructions
/// rather than a 64-character string).
public struct BundleDigest: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The SHA-256 of the compressed bundle.
    public let sha256: SHA256Digest

    /// The bundle whose compressed bytes have this SHA-256.
    public init(sha256: SHA256Digest) { self.sha256 = sha256 }

    /// Parses `sha256:<64 hex digits>`; nil for anything else.
    public init?(_ text: String) {
        guard text.hasPrefix("sha256:"), let parsed = Hex.words256(text.utf8.span.extracting(7...)) else { return nil }
        sha256 = SHA256Digest(words: parsed.0, parsed.1, parsed.2, parsed.3)
    }

    /// Parses 64 lower-case hex digits; nil for anything else.
    public init?<Bytes: Collection>(validatingHex bytes: Bytes) where Bytes.Element == UInt8 {
        let parsed = Hex.words256(collection: bytes)
        guard let parsed else { return nil }
        sha256 = SHA256Digest(words: parsed.0, parsed.1, parsed.2, parsed.3)
    }

    /// Wraps the four 64-bit words of 64 hex digits already checked (by `JSONScanner`), most
    /// significant first.
    init(words w0: UInt64, _ w1: UInt64, _ w2: UInt64, _ w3: UInt64) {
        sha256 = SHA256Digest(words: w0, w1, w2, w3)
    }

    /// Wraps a hex digest already known to be valid (from a hasher).
    public init(hex: String) {
        guard let digest = SHA256Digest(hex: hex) else { preconditionFailure("not a lower-case SHA-256 hex digest: \(hex)") }
        sha256 = digest
    }

    /// The lower-case hex SHA-256, without the `sha256:` prefix.
    public var hex: String { sha256.hex }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let digest = BundleDigest(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "'\(text)' is not a bundle digest (sha256:<64 lower-case hex digits>)")
        }
        self = digest
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
    public var description: String { "sha256:" + hex }
    /// A short form for messages and progress lines.
    public var short: String { "sha256:" + hex.prefix(12) }
    public static func < (lhs: BundleDigest, rhs: BundleDigest) -> Bool { lhs.sha256 < rhs.sha256 }
}

/// A map version such as `2026.11.0`, ordered component by component (numbers numerically).
public struct MapVersion: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The version as written.
    public let rawValue: String
    /// Wraps a version string.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
    public var description: String { rawValue }
    public static func < (lhs: MapVersion, rhs: MapVersion) -> Bool {
        let l = lhs.rawValue.split(separator: ".")
        let r = rhs.rawValue.split(separator: ".")
        for (a, b) in zip(l, r) where a != b {
            if let x = Int(a), let y = Int(b) { return x < y }
            return a < b
        }
        return l.count < r.count
    }
}
