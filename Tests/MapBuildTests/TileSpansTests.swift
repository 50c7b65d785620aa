import MapFormat
import Testing

@testable import MapBuild

/// `TileSpans` (issue 45): the tile runs a shard wants are read as few spans, but never with more
/// than an eighth of their bytes in gaps, so other shards' runs between them are not fetched.
@Suite struct TileSpansTests {
    static func entry(_ offset: UInt64, _ length: UInt64) -> PMTiles.Entry {
        PMTiles.Entry(tileID: offset, offset: offset, length: length, runLength: 1)
    }

    @Test func adjacentRunsAreOneSpanAndASharedTileIsReadOnce() {
        let spans = TileSpans(entries: [Self.entry(100, 50), Self.entry(0, 100), Self.entry(0, 100), Self.entry(150, 10)])
        #expect(spans.spans == [0..<160])
        #expect(spans.index(of: 150) == 0)
    }

    @Test func aGapWithinAnEighthOfTheWantedBytesIsReadAndALargerOneIsNot() {
        // 800 wanted bytes, then a gap of 100 (an eighth): one span.
        #expect(TileSpans(entries: [Self.entry(0, 800), Self.entry(900, 1)]).spans == [0..<901])
        // A gap of 200 after 800 bytes: two spans, the other shard's 200 bytes not read.
        let apart = TileSpans(entries: [Self.entry(0, 800), Self.entry(1000, 10)])
        #expect(apart.spans == [0..<800, 1000..<1010])
        #expect(apart.index(of: 1000) == 1)
        #expect(apart.index(of: 0) == 0)
    }

    @Test func aSpanStopsAtTheSpanBytes() {
        let half = ImportPMTiles.spanBytes / 2 + 1
        let spans = TileSpans(entries: [Self.entry(0, half), Self.entry(half, half)])
        #expect(spans.spans == [0..<half, half..<(2 * half)])
    }
}
