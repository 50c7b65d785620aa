import Foundation
import Testing

@testable import MapFetch

/// The content-defined cuts `publish --chunked` hands to libzck (issue 21).
@Suite struct ChunkCutterTests {
    func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    func cuts(_ data: [UInt8], pieces: Int = 1) -> [Int] {
        var cutter = ChunkCutter(average: 8 << 10)
        var out: [Int] = []
        let step = (data.count + pieces - 1) / pieces
        for start in stride(from: 0, to: data.count, by: step) {
            let end = min(data.count, start + step)
            out += data[start..<end].withUnsafeBytes { cutter.cuts(in: $0) }.map { $0 + start }
        }
        return out
    }

    @Test func cutsAreWithinBoundsAverageAboutTheAskedSizeAndIgnoreBufferSplits() {
        let data = bytes(1 << 20, seed: 7)
        let whole = cuts(data)
        #expect(whole == cuts(data, pieces: 37), "the cuts do not depend on how the input is read")
        let lengths = zip([0] + whole, whole).map { $1 - $0 }
        #expect(lengths.allSatisfy { $0 >= 2 << 10 && $0 <= 64 << 10 })
        let average = Double(data.count) / Double(whole.count)
        #expect(average > 6144 && average < 14336, "average \(average)")
    }

    @Test func anEditMovesOnlyTheCutsNearIt() {
        let data = bytes(1 << 20, seed: 11)
        var edited = data
        for i in 500_000..<500_100 { edited[i] ^= 0x5A }
        let before = Set(cuts(data))
        let after = Set(cuts(edited))
        #expect(before.symmetricDifference(after).allSatisfy { abs($0 - 500_000) < 80 << 10 })
        #expect(before.intersection(after).count > before.count - 4)
    }
}
