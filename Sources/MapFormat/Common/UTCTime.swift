import Foundation

/// The one form in which mappack writes and reads a time: `YYYY-MM-DDTHH:MM:SSZ`, UTC, a four-digit
/// year from 1970 to 9999, nothing else (no fractions, no offsets), so every reader agrees on it.
public enum UTCTime {
    /// The last time the form holds: 9999-12-31T23:59:59Z.
    public static let latest = Date(timeIntervalSince1970: 253_402_300_799)

    /// `text` as a date; nil unless it is exactly of the form above and names a real time.
    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20 else { return nil }
        let separators: [Int: UInt8] = [4: 0x2D, 7: 0x2D, 10: 0x54, 13: 0x3A, 16: 0x3A, 19: 0x5A]
        for (index, byte) in bytes.enumerated() {
            if let separator = separators[index] {
                guard byte == separator else { return nil }
            } else if !(0x30...0x39).contains(byte) {
                return nil
            }
        }
        func number(_ range: Range<Int>) -> Int { bytes[range].reduce(0) { $0 * 10 + Int($1 - 0x30) } }
        let (year, month, day) = (number(0..<4), number(5..<7), number(8..<10))
        let (hour, minute, second) = (number(11..<13), number(14..<16), number(17..<19))
        guard year >= 1970, (1...12).contains(month), (1...daysIn(month, of: year)).contains(day), hour < 24, minute < 60, second < 60 else {
            return nil
        }
        let seconds = ((daysSince1970(year: year, month: month, day: day) * 24 + hour) * 60 + minute) * 60 + second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// `text` as a date when it is an ISO 8601 time in one of the common spellings: the form above,
    /// with fractional seconds or an offset (`+01:00`, `-0530`) instead of `Z`, or a date
    /// alone (midnight UTC). For times written by others (a catalog's `released`), read tolerantly
    /// and then written in the one form (`normalised`). Nil for anything else: a time without a zone
    /// (whose zone would be a guess), trailing text, a date that does not exist. Read here, not by a
    /// date formatter, so every platform reads the same text as the same time.
    public static func parseISO8601(_ text: String) -> Date? {
        if let date = parse(text) { return date }
        let bytes = Array(text.utf8)
        if bytes.count == 10 { return parse(text + "T00:00:00Z") }
        guard bytes.count > 19, let base = parse(String(decoding: bytes[0..<19], as: UTF8.self) + "Z") else { return nil }
        var zone = bytes[19...]
        var fraction = 0.0
        if zone.first == UInt8(ascii: ".") {
            let digits = zone.dropFirst().prefix { (0x30...0x39).contains($0) }
            guard !digits.isEmpty, let value = Double("0." + String(decoding: digits, as: UTF8.self)) else { return nil }
            fraction = value
            zone = zone.dropFirst(1 + digits.count)
        }
        guard let offset = offsetSeconds(Array(zone)) else { return nil }
        return base.addingTimeInterval(fraction - TimeInterval(offset))
    }

    /// Seconds east of UTC of a zone designator: `Z`, `+HH:MM`, `+HHMM` (or `-`); nil otherwise.
    private static func offsetSeconds(_ zone: [UInt8]) -> Int? {
        if zone == [UInt8(ascii: "Z")] { return 0 }
        guard zone.count == 5 || zone.count == 6, zone[0] == UInt8(ascii: "+") || zone[0] == UInt8(ascii: "-") else { return nil }
        let digits = zone.count == 6 ? [zone[1], zone[2], zone[4], zone[5]] : Array(zone[1...4])
        guard zone.count == 5 || zone[3] == UInt8(ascii: ":"), digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let (hours, minutes) = (Int(digits[0] - 0x30) * 10 + Int(digits[1] - 0x30), Int(digits[2] - 0x30) * 10 + Int(digits[3] - 0x30))
        guard hours < 24, minutes < 60 else { return nil }
        return (zone[0] == UInt8(ascii: "-") ? -1 : 1) * (hours * 3600 + minutes * 60)
    }

    /// `text` (any spelling `parseISO8601` reads) in the one form; nil when it is not a time or
    /// falls outside 1970 to 9999.
    public static func normalised(_ text: String) -> String? { parseISO8601(text).flatMap(format) }

    /// `date` in the form above (whole seconds, rounded down); nil before 1970 or past `latest`.
    public static func format(_ date: Date) -> String? {
        guard date.timeIntervalSince1970 >= 0, date <= latest else { return nil }
        // Worked out here rather than by `ISO8601DateFormatter`, whose first use loads ICU's
        // calendar and time zone data: about 6 MiB of a device install's peak memory (issue 34).
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let (year, month, day) = civil(daysSince1970: seconds / 86_400)
        let time = seconds % 86_400
        func digits(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(digits(year, 4))-\(digits(month, 2))-\(digits(day, 2))T"
            + "\(digits(time / 3600, 2)):\(digits(time / 60 % 60, 2)):\(digits(time % 60, 2))Z"
    }

    private static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    private static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the date (Howard Hinnant's `days_from_civil`).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01, for `days` ≥ 0 (Howard Hinnant's `civil_from_days`).
    private static func civil(daysSince1970 days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = shifted / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
