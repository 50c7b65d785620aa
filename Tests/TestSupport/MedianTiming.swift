/// Timings that print ratios in opt-in comparison tests (never asserted: speed is measured by
/// `make bench`). Seven runs, the median in milliseconds.
package enum MedianTiming {
    package static func milliseconds(runs: Int = 7, _ body: () throws -> Void) rethrows -> Double {
        let clock = ContinuousClock()
        var times: [Double] = []
        for _ in 0..<runs {
            let elapsed = try clock.measure(body)
            times.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
        }
        return times.sorted()[runs / 2]
    }
}
