import Foundation

/// The clocks commands read, both pinnable from the environment.
enum CommandClock {
    /// The build clock for what a build or publish writes: `SOURCE_DATE_EPOCH` when set (reproducible
    /// outputs), else now.
    static func build() throws(UsageError) -> Date {
        try seconds("SOURCE_DATE_EPOCH") ?? Date()
    }

    /// `SOURCE_DATE_EPOCH` in whole seconds, nil when unset: the one place it is read and bounded.
    static func sourceDateEpoch() throws(UsageError) -> Int? {
        try seconds("SOURCE_DATE_EPOCH").map { Int($0.timeIntervalSince1970) }
    }

    /// The clock that judges whether a catalog signature has expired: now, or `MAPPACK_NOW` (whole seconds
    /// since 1970), which exists for tests only: a device or CI machine never sets it.
    static func check() throws(UsageError) -> @Sendable () -> Date {
        guard let pinned = try seconds("MAPPACK_NOW") else { return { Date() } }
        return { pinned }
    }

    private static func seconds(_ name: String) throws(UsageError) -> Date? {
        guard let text = ProcessInfo.processInfo.environment[name], !text.isEmpty else { return nil }
        // Up to the end of year 9999, so dates stay four-digit years and versions stay in range.
        guard let value = Int(text), (0...253_402_300_799).contains(value) else {
            throw UsageError(message: "\(name) must be whole seconds since 1970 (before year 10000), not '\(text)'")
        }
        return Date(timeIntervalSince1970: TimeInterval(value))
    }
}
