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

/// A bundle's content address: `sha256:` and the hex SHA-256 of its compressed bytes.
public struct BundleDigest: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The lower-case hex SHA-256, without the `sha256:` prefix.
    public let hex: String

    /// Parses `sha256:<64 hex digits>`; nil for anything else.
    public init?(_ text: String) {
        guard text.hasPrefix("sha256:") else { return nil }
        let hex = String(text.dropFirst(7))
        guard hex.utf8.count == 64, hex.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }) else { return nil }
        self.hex = hex
    }

    /// Wraps a hex digest already known to be valid (from a hasher).
    public init(hex: String) { self.hex = hex }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let digest = BundleDigest(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not a bundle digest (sha256:<64 lower-case hex digits>)")
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
    public static func < (lhs: BundleDigest, rhs: BundleDigest) -> Bool { lhs.hex < rhs.hex }
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
        let l = lhs.rawValue.split(separator: "."), r = rhs.rawValue.split(separator: ".")
        for (a, b) in zip(l, r) where a != b {
            if let x = Int(a), let y = Int(b) { return x < y }
            return a < b
        }
        return l.count < r.count
    }
}
