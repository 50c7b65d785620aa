import Foundation
import MapFormat
import MapIO
import Testing

@testable import MapBuild

/// How the `pmtiles` output stores tiles (the format itself: `MapFormatTests/PMTilesTests`).
@Suite struct PMTilesOutputStoringTests {
    @Test func vectorTilesAreStoredGzippedWhateverTheirSourceWrapping() throws {
        let mvt = Data([0x1A, 0x05, 0x0A, 0x03, 0x61, 0x62, 0x63])
        let gzipped = try Zlib.gzip(mvt)
        #expect(try PMTilesOutput.stored(gzipped, compression: .gzip) == gzipped)
        #expect(try PMTilesOutput.stored(mvt, compression: .gzip) == gzipped)
        #expect(try PMTilesOutput.stored(try Zlib.deflate(mvt), compression: .gzip) == gzipped)
        #expect(try PMTilesOutput.stored(mvt, compression: .none) == mvt)
    }
}
