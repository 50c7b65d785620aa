/// The `"format": "<name>/<major>"` tag every mappack file carries.
public struct FormatTag: Hashable, Sendable, CustomStringConvertible {
    /// The format's name, e.g. `mappack-catalog`.
    public let name: String
    /// The major version; a reader refuses majors it does not know.
    public let major: Int

    /// Builds a tag.
    public init(name: String, major: Int) {
        self.name = name
        self.major = major
    }

    /// Parses `name/major`; nil when the text has another shape.
    public init?(_ text: String) {
        guard let slash = text.lastIndex(of: "/"), let major = Int(text[text.index(after: slash)...]) else { return nil }
        self.name = String(text[..<slash])
        self.major = major
    }
    public var description: String { "\(name)/\(major)" }
}

/// Why a format tag was refused.
public enum FormatTagError: Error, Equatable, Sendable, CustomStringConvertible {
    case missing(expected: FormatTag)
    case unknown(found: String, expected: FormatTag)

    public var description: String {
        switch self {
        case .missing(let expected):
            return "no \"format\" field; expected \"\(expected)\""
        case .unknown(let found, let expected):
            return "format \"\(found)\" is not supported (this mappack reads \"\(expected)\"); use a newer mappack or regenerate the file"
        }
    }

    /// Accepts `found` when it names `expected`'s format and major.
    public static func check(_ found: String?, expected: FormatTag) throws(FormatTagError) {
        guard let found else { throw FormatTagError.missing(expected: expected) }
        guard let tag = FormatTag(found), tag == expected else { throw FormatTagError.unknown(found: found, expected: expected) }
    }
}
