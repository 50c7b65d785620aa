/// A SplitMix64 generator: fast, tiny, and the same sequence on every platform and Swift release,
/// which the demo world needs so that one seed always gives byte-identical files.
/// (`SystemRandomNumberGenerator` and `random()` are neither seedable nor stable.)
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    /// Starts the sequence at `seed`.
    init(seed: UInt64) { state = seed }

    /// Starts a sequence derived from several labelled parts (seed, region id, version, purpose),
    /// so every file draws from its own stream and adding a region never shifts another's bytes.
    init(_ parts: String..., seed: UInt64) {
        state = SeededRandom.hash(parts.joined(separator: "\u{1F}"), seed: seed)
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return SeededRandom.mix(state)
    }

    /// A value in `0..<bound` (slightly biased for huge bounds, which the demo does not use).
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// A value in `range`.
    mutating func inRange(_ range: ClosedRange<Int>) -> Int { range.lowerBound + below(range.count) }

    /// A uniform value in `[0, 1)`.
    mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// SplitMix64's output function, a strong 64-bit mixer.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// FNV-1a over the UTF-8 bytes, then mixed: a stable hash (Swift's `Hasher` is randomized per process).
    static func hash(_ text: String, seed: UInt64) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325 ^ mix(seed)
        for byte in text.utf8 {
            h ^= UInt64(byte)
            h &*= 0x0000_0100_0000_01B3
        }
        return mix(h)
    }

    /// A stable uniform value in `[0, 1)` for labelled parts, for yes/no decisions such as "did this region change".
    static func fraction(_ parts: String..., seed: UInt64) -> Double {
        Double(hash(parts.joined(separator: "\u{1F}"), seed: seed) >> 11) * 0x1.0p-53
    }
}
