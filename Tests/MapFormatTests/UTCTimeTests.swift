import Foundation
import MapFormat
import Testing

@Suite struct UTCTimeTests {
    @Test(arguments: [
        (0.0, "1970-01-01T00:00:00Z"),
        (59.9, "1970-01-01T00:00:59Z"),
        (951_782_400, "2000-02-29T00:00:00Z"),
        (4_107_542_399, "2100-02-28T23:59:59Z"),
        (1_796_083_199, "2026-11-30T23:59:59Z"),
        (253_402_300_799, "9999-12-31T23:59:59Z"),
    ])
    func formatsWholeSecondsInTheOneForm(seconds: Double, text: String) {
        #expect(UTCTime.format(Date(timeIntervalSince1970: seconds)) == text)
    }

    @Test func formatRefusesTimesOutsideTheForm() {
        #expect(UTCTime.format(Date(timeIntervalSince1970: -1)) == nil)
        #expect(UTCTime.format(UTCTime.latest.addingTimeInterval(1)) == nil)
    }

    /// Every 29th day from 1970 to 9999 (so every month and day of a month comes up, at a time of day
    /// that varies) reads back as itself.
    @Test func formatAndParseAgreeOnEveryDay() {
        var day = 0
        while Double(day) * 86_400 <= UTCTime.latest.timeIntervalSince1970 {
            let seconds = Double(day * 86_400 + (day * 7_919) % 86_400)
            let text = UTCTime.format(Date(timeIntervalSince1970: seconds))
            guard text.flatMap(UTCTime.parse)?.timeIntervalSince1970 == seconds else {
                Issue.record("day \(day) formats as \(text ?? "nil")")
                return
            }
            day += 29
        }
    }
}
