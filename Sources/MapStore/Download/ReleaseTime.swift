import Foundation
import MapFormat

/// A catalog's release time (ISO 8601 text) as a `Date`.
enum ReleaseTime {
    /// `2026-11-20T00:00:00Z`, with fractional seconds or an offset instead of `Z`, or a date alone
    /// (`2026-11-20`, midnight UTC) (`UTCTime.parseISO8601`); nil for anything else (a time shown to
    /// people: an unreadable one is left out, not guessed).
    static func parse(_ text: String?) -> Date? {
        guard let text, !text.isEmpty else { return nil }
        return UTCTime.parseISO8601(text)
    }
}
