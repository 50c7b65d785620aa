import Foundation

/// A catalog's release time (ISO 8601 text) as a `Date`.
enum ReleaseTime {
    /// `2026-11-20T00:00:00Z`, with fractional seconds or an offset instead of `Z`, or a date alone
    /// (`2026-11-20`, midnight UTC); nil for anything else (a time shown to people: an unreadable one
    /// is left out, not guessed).
    static func parse(_ text: String?) -> Date? {
        guard let text, !text.isEmpty else { return nil }
        if let date = try? Date.ISO8601FormatStyle().parse(text) { return date }
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        return try? Date.ISO8601FormatStyle().year().month().day().parse(text)
    }
}
