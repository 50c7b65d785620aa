/// A path relative to a store's root (an image's `store/` folder, a device's installed store), as a
/// manifest, a shard record or a bundle's archive entry names a file: checked once, where it enters,
/// by the one rule every reader applies, so a path is accepted or refused alike by `mappack verify`,
/// a build, a merge and a device's install.
///
/// The rule: 1 to 1024 bytes, `/`-separated names, none empty, `.` or `..`; not absolute; no NUL and no
/// backslash. So joined to a folder it names a file inside that folder, and one file has one spelling
/// (`a//b` and `a/./b` are refused, not read as `a/b`).
public struct StorePath: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The path, exactly as written.
    public let string: String

    /// The path `text`, or the rule it breaks.
    public init(validating text: String) throws(StorePath.Problem) {
        if let problem = StorePath.problem(text) { throw problem }
        string = text
    }

    /// `text`, which the same rule already accepted where it entered (`SafeExtractor.cleanPath` for a
    /// bundle's archive entries): not checked again.
    package init(alreadyChecked text: String) {
        assert(StorePath.problem(text) == nil, "\(text) was not checked")
        string = text
    }

    public var description: String { string }

    /// Ordered as their text (`String`'s order), as file lists are sorted.
    public static func < (lhs: StorePath, rhs: StorePath) -> Bool { lhs.string < rhs.string }

    /// Decodes a JSON string, refused (`DecodingError.dataCorrupted`) when it is not a store path.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do { try self.init(validating: text) } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not a store path: \(error)")
        }
    }

    /// Encodes the path as a JSON string, exactly as written.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(string)
    }

    /// Longest path accepted, in bytes.
    public static let maxLength = 1024

    /// A rule a store path breaks.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case absolute
        case empty
        case forbiddenByte
        case climbs
        case emptyComponent
        case tooLong

        public var description: String {
            switch self {
            case .absolute: "absolute paths are not allowed"
            case .empty: "empty path"
            case .forbiddenByte: "NUL or backslash in path"
            case .climbs: "'..' climbs out of the destination"
            case .emptyComponent: "empty or '.' path component"
            case .tooLong: "path longer than \(StorePath.maxLength) bytes"
            }
        }
    }

    /// Which rules a path is checked by.
    package enum Rules: Sendable {
        /// All of a store path's.
        case storePath
        /// The ones that keep a path joined to a folder inside it: not absolute, not empty, no NUL, no
        /// empty, `.` or `..` component. A store path's other two, no backslash and at most
        /// `maxLength` bytes, are left out: MapIO's `FolderEntry` names files on this machine's disk
        /// (an output the user named, a staging entry made from it), where a backslash is a byte like
        /// any other and the file system sets the length.
        case insideFolder
    }

    /// Why `text` is not a store path; nil when it is one.
    public static func problem(_ text: String) -> Problem? {
        problem(in: text.utf8.span)
    }

    /// Why `text` breaks `rules`; nil when it keeps them.
    package static func problem(_ text: String, rules: Rules) -> Problem? {
        problem(in: text.utf8.span, rules: rules)
    }

    /// Why the UTF-8 `bytes` are not a store path (or break the looser `rules`); nil when they are one.
    /// Every rule is about ASCII bytes (`/`, `.`, NUL, `\\`), so the bytes are checked as they are, as
    /// the kernel reads a path: a `/` that a combining mark joins into one `Character` still separates names.
    package static func problem(in bytes: Span<UInt8>, rules: Rules = .storePath) -> Problem? {
        let slash = UInt8(ascii: "/")
        let dot = UInt8(ascii: ".")
        let count = bytes.count
        let storePath = rules == .storePath
        if count > 0 && bytes[0] == slash { return .absolute }
        if count == 0 { return .empty }
        if count <= maxLength || !storePath, WordCheck.accepts(bytes) { return nil }
        // One pass (a manifest's every entry comes through here); a forbidden byte anywhere is told
        // before a bad component, as the rules are listed.
        var component: Problem?
        var componentStart = 0
        for index in 0...count {
            let byte = index == count ? slash : bytes[index]
            if byte == 0 || (byte == UInt8(ascii: "\\") && storePath) { return .forbiddenByte }
            guard byte == slash, component == nil else { continue }
            let length = index - componentStart
            if length == 2 && bytes[componentStart] == dot && bytes[componentStart + 1] == dot {
                component = .climbs
            } else if length == 0 || (length == 1 && bytes[componentStart] == dot) {
                component = .emptyComponent
            }
            componentStart = index + 1
        }
        if let component { return component }
        if count > maxLength && storePath { return .tooLong }
        return nil
    }
}

/// A store path's rules checked eight bytes at a time, for the paths a manifest lists by the hundred
/// thousand: true only when every rule holds. On false (a short path, a broken rule) the byte-by-byte
/// check says which rule fails.
private enum WordCheck {
    /// True when `bytes` (at least eight) hold no NUL or backslash and, seen as `/` + bytes + `/`, no
    /// `//`, `/./` or `/../`: no empty, `.` or `..` component, not absolute.
    static func accepts(_ bytes: Span<UInt8>) -> Bool {
        let count = bytes.count
        guard count >= 8 else { return false }
        let slash = UInt8(ascii: "/")
        let dot = UInt8(ascii: ".")
        // The ends, where the virtual slashes are.
        let first = bytes[0]
        let last = bytes[count - 1]
        if first == slash || last == slash { return false }
        if first == dot && (bytes[1] == slash || (bytes[1] == dot && bytes[2] == slash)) { return false }
        if last == dot && (bytes[count - 2] == slash || (bytes[count - 2] == dot && bytes[count - 3] == slash)) { return false }
        // Windows of eight bytes, five apart (and the last eight): every run of four bytes lies wholly
        // in one of them.
        var offset = 0
        while true {
            let word = RawBytes.word(bytes, at: offset)
            let slashes = RawBytes.Word.equal(word, slash)
            let dots = RawBytes.Word.equal(word, dot)
            if RawBytes.Word.equal(word, 0) | RawBytes.Word.equal(word, UInt8(ascii: "\\")) != 0 { return false }
            if slashes & (slashes >> 8) != 0 { return false }
            if slashes & (dots >> 8) & (slashes >> 16) != 0 { return false }
            if slashes & (dots >> 8) & (dots >> 16) & (slashes >> 24) != 0 { return false }
            if offset == count - 8 { return true }
            offset = min(offset + 5, count - 8)
        }
    }
}
