/// Latencies of one measured loop, in nanoseconds, and the statistics a row reports.
struct LatencySamples: Sendable {
    private(set) var nanoseconds: [UInt64] = []

    mutating func append(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        nanoseconds.append(UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds / 1_000_000_000)))
    }

    var count: Int { nanoseconds.count }

    /// The value below which `fraction` of the samples lie (nearest rank), in milliseconds; 0 with no samples.
    func quantileMilliseconds(_ fraction: Double) -> Double {
        guard !nanoseconds.isEmpty else { return 0 }
        let sorted = nanoseconds.sorted()
        let rank = min(sorted.count - 1, max(0, Int((fraction * Double(sorted.count)).rounded(.up)) - 1))
        return Double(sorted[rank]) / 1e6
    }

    var medianMilliseconds: Double { quantileMilliseconds(0.5) }
    var p99Milliseconds: Double { quantileMilliseconds(0.99) }
    var maxMilliseconds: Double { Double(nanoseconds.max() ?? 0) / 1e6 }
}
