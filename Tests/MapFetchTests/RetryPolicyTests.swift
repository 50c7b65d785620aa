import Foundation
import MapFetch
import Testing

/// Backoff arithmetic and `Retry-After` parsing.
@Suite struct RetryPolicyTests {
    @Test func backoffDoublesWithJitterAndStaysUnderTheCap() {
        let policy = RetryPolicy(baseDelay: 1, maxDelay: 8)
        for failures in 1...6 {
            let ceiling = min(8, pow(2, Double(failures - 1)))
            for _ in 0..<50 {
                let delay = policy.delay(afterFailure: failures)
                #expect(delay >= ceiling / 2 && delay <= ceiling)
            }
        }
    }

    @Test func retryAfterWinsButIsCapped() {
        let policy = RetryPolicy(maxRetryAfter: 10)
        #expect(policy.delay(afterFailure: 1, retryAfter: 3) == 3)
        #expect(policy.delay(afterFailure: 1, retryAfter: 3600) == 10)
    }

    @Test func parsesRetryAfterSecondsAndDates() throws {
        #expect(RetryPolicy.retryAfterSeconds("7") == 7)
        #expect(RetryPolicy.retryAfterSeconds(nil) == nil)
        #expect(RetryPolicy.retryAfterSeconds("soon") == nil)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let seconds = try #require(RetryPolicy.retryAfterSeconds(formatter.string(from: Date().addingTimeInterval(30))))
        #expect(seconds > 25 && seconds <= 30)
    }

    @Test(arguments: [(408, true), (429, true), (500, true), (503, true), (404, false), (403, false), (416, false)])
    func retriesOnlyTransientStatuses(status: Int, retryable: Bool) {
        #expect(RetryPolicy.isRetryable(status: status) == retryable)
    }
}
