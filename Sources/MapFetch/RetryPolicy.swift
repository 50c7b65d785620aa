import Foundation

/// How hard the fetcher tries: attempts, backoff between them, and when a slow transfer counts as stalled.
package struct RetryPolicy: Sendable, Equatable {
    /// Failed attempts in a row that brought no new bytes before a bundle is given up.
    /// An attempt that extends the partial file resets the count, so a flaky but moving download finishes.
    package var maxAttempts: Int
    /// Delay before the first retry, in seconds; doubles each failure, with jitter.
    package var baseDelay: Double
    /// Longest computed delay, in seconds.
    package var maxDelay: Double
    /// Longest `Retry-After` honoured, in seconds; longer answers are cut to this.
    package var maxRetryAfter: Double
    /// Bytes per second under which a transfer counts as slow.
    package var lowSpeedLimit: Int
    /// Seconds a transfer may stay slow (or silent before the first byte) before it is abandoned and retried.
    package var lowSpeedTime: Int
    /// Seconds allowed to open a connection.
    package var connectTimeout: Int
    /// Shortest gap between two `progress` events of one bundle, in seconds.
    package var progressInterval: Double

    /// A policy; defaults suit a build machine on an ordinary network.
    package init(
        maxAttempts: Int = 5, baseDelay: Double = 1, maxDelay: Double = 30, maxRetryAfter: Double = 120,
        lowSpeedLimit: Int = 1024, lowSpeedTime: Int = 30, connectTimeout: Int = 30, progressInterval: Double = 0.1
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
        self.lowSpeedLimit = lowSpeedLimit
        self.lowSpeedTime = lowSpeedTime
        self.connectTimeout = connectTimeout
        self.progressInterval = progressInterval
    }

    /// The default policy: 5 attempts, 1 s doubling to 30 s, 30 s below 1 KiB/s counts as a stall.
    package static let standard = RetryPolicy()

    /// Seconds to wait after the `failures`-th failure in a row: exponential, with "equal jitter"
    /// (half fixed, half random) so many clients hit by one outage do not come back in step.
    package func delay(afterFailure failures: Int, retryAfter: Double? = nil) -> Double {
        if let retryAfter { return min(max(0, retryAfter), maxRetryAfter) }
        let exponential = min(maxDelay, baseDelay * pow(2, Double(max(0, failures - 1))))
        return exponential / 2 + Double.random(in: 0...(exponential / 2))
    }

    /// HTTP statuses worth another attempt: timeouts, throttling and server errors.
    package static func isRetryable(status: Int) -> Bool {
        status == 408 || status == 429 || (500...599).contains(status)
    }

    /// Seconds in a `Retry-After` header (delta-seconds or an HTTP date); nil when absent or unreadable.
    package static func retryAfterSeconds(_ value: String?) -> Double? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Double(value), seconds >= 0 { return seconds }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return max(0, date.timeIntervalSinceNow)
    }
}
