import Foundation
import MapFormat
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

    /// The first publishers' cut (a catalog without cutting parameters): 8 KiB, plain.
    static let legacy = Zchunk.Parameters(ChunkedBundle(url: "x.zck", size: 1, headerSize: 1, headerSHA256: ""))
    /// What `publish --chunked` uses for a large bundle: 8 KiB, normalized.
    static let normalized = Zchunk.Parameters.publisher(tarSize: 1 << 30)

    func cuts(_ data: [UInt8], pieces: Int = 1, _ parameters: Zchunk.Parameters = legacy, fixed: [Range<Int64>] = []) -> [Int] {
        var cutter = ChunkCutter(parameters, fixed: fixed)
        var out: [Int] = []
        let step = (data.count + pieces - 1) / pieces
        for start in stride(from: 0, to: data.count, by: step) {
            let end = min(data.count, start + step)
            unsafe out += data[start..<end].withUnsafeBytes { unsafe cutter.cuts(in: $0) }.map { $0 + start }
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

    @Test func aCatalogWithoutParametersMeansTheFirstPublishersCut() {
        #expect(Self.legacy == Zchunk.Parameters(chunkSize: 8192, minChunk: 2048, maxChunk: 65536, normalization: 0, level: 6))
        #expect(!Self.legacy.sqlitePages)
        let cutter = ChunkCutter(Self.legacy)
        #expect(cutter.strictMask == 8191 && cutter.looseMask == 8191 && cutter.normal == 2048)
    }

    /// Normalized cuts gather around the chunk size: the same input in about as many chunks, but
    /// far fewer long ones (an edit lands in a chunk as likely as its length, so the long ones are
    /// what updates pay for).
    @Test func normalizedCutsAreWithinBoundsAndGatherAroundTheChunkSize() {
        #expect(
            Self.normalized == Zchunk.Parameters(chunkSize: 8192, minChunk: 2048, maxChunk: 32768, normalization: 1, level: 6, sqlitePages: true))
        let data = bytes(1 << 21, seed: 5)
        func lengths(_ parameters: Zchunk.Parameters) -> [Int] {
            let ends = cuts(data, parameters)
            return zip([0] + ends, ends).map { $1 - $0 }
        }
        let plain = lengths(Self.legacy)
        let normalized = lengths(Self.normalized)
        #expect(cuts(data, pieces: 29, Self.normalized) == cuts(data, Self.normalized))
        #expect(normalized.dropLast().allSatisfy { $0 >= 2048 && $0 <= 32768 })
        // What an edit at a random byte costs: the length of the chunk it lands in, on average, here
        // against the mean length (2 for lengths spread as plain cuts spread them, 1 for equal ones).
        func sizeBiased(_ lengths: [Int]) -> Double {
            Double(lengths.reduce(0) { $0 + $1 * $1 }) / Double(data.count) / (Double(data.count) / Double(lengths.count))
        }
        let mean = Double(data.count) / Double(normalized.count)
        #expect(mean > 6144 && mean < 12288, "mean \(mean)")
        #expect(sizeBiased(normalized) < 0.8 * sizeBiased(plain), "\(sizeBiased(normalized)) against \(sizeBiased(plain))")
    }

    /// What the publisher records is what a device cuts with, the SQLite page cut included.
    @Test func theRecordedParametersAreTheOnesADeviceReads() {
        let recorded = Self.normalized.recorded(in: ChunkedBundle(url: "x.zck", size: 1, headerSize: 1, headerSHA256: ""))
        #expect(recorded.sqlitePages == true)
        #expect(Zchunk.Parameters(recorded) == Self.normalized)
    }

    /// The publisher's chunk size: a 64th of the bundle's tar, a power of two from 1 to 8 KiB.
    @Test(arguments: [(Int64(0), 1024), (100_000, 1024), (131_072, 2048), (300_000, 4096), (524_288, 8192), (1 << 30, 8192)])
    func thePublishersChunkSizeFollowsTheBundlesSize(_ tarSize: Int64, _ chunkSize: Int) {
        let parameters = Zchunk.Parameters.publisher(tarSize: tarSize)
        #expect(parameters.chunkSize == chunkSize && parameters.minChunk == chunkSize / 4 && parameters.maxChunk == chunkSize * 4)
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

    /// Fixed stretches (a tar's SQLite databases): a chunk ends where one starts, every chunk size
    /// from there and where it ends, however the input is read; elsewhere the cut is by content.
    @Test func fixedStretchesAreCutEveryChunkSizeWhateverTheReads() {
        let data = bytes(300_000, seed: 3)
        let parameters = Self.normalized
        let step = parameters.chunkSize
        let stretches: [Range<Int64>] = [10_000..<60_000, 60_512..<61_000, 61_000..<70_000, 100_000..<100_000, 150_000..<250_001]
        let whole = cuts(data, parameters, fixed: stretches)
        #expect(whole == cuts(data, pieces: 7, parameters, fixed: stretches))
        #expect(whole == cuts(data, pieces: 1000, parameters, fixed: stretches), "reads of 300 bytes")
        #expect(zip([0] + whole, whole).allSatisfy { $1 > $0 }, "no empty chunk")
        for stretch in stretches where !stretch.isEmpty {
            let (lower, upper) = (Int(stretch.lowerBound), Int(stretch.upperBound))
            #expect(whole.contains(lower), "a chunk ends where \(stretch) starts")
            let inside = whole.filter { $0 > lower && $0 <= upper }
            #expect(inside == Array(stride(from: lower + step, to: upper, by: step)) + [upper], "\(stretch): \(inside)")
        }
        // Before the first stretch the cut is the plain content-defined one.
        let plain = cuts(data, parameters)
        #expect(whole.filter { $0 < 10_000 } == plain.filter { $0 < 10_000 })
        #expect(!whole.filter { $0 > 250_001 }.isEmpty)
    }
}
