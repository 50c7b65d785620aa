import Foundation
import Testing

@testable import MapStore

/// A catalog's `supportedUntil` day is over only once the next UTC day has begun.
@Suite struct SupportWindowTests {
    @Test(arguments: [
        ("2027-11-20", 1_826_755_199.0, false),  // 2027-11-20T23:59:59Z: the last second of the day
        ("2027-11-20", 1_826_755_200.0, true),  // 2027-11-21T00:00:00Z
        ("2027-11-20T00:00:00Z", 1_826_755_199.0, false),
        ("2027-11-20T00:00:00Z", 1_826_755_200.0, true),
        ("2024-02-29", 1_709_251_199.0, false),  // 2024-02-29T23:59:59Z, a leap day
        ("2024-02-29", 1_709_251_200.0, true),  // 2024-03-01
    ])
    func supportEndsAfterItsDay(until: String, now: Double, past: Bool) {
        #expect(StoreCore.isPast(until, now: Date(timeIntervalSince1970: now)) == past)
    }
}
