import Foundation
import MapIO
import Testing

@testable import MapBuild

/// The PMTiles v3 facts the `pmtiles` output writes, against the values the spec gives.
@Suite struct PMTilesTests {
    @Test(arguments: [
        (0, 0, 0, UInt64(0)),
        (1, 0, 0, 1), (1, 0, 1, 2), (1, 1, 1, 3), (1, 1, 0, 4),
        (2, 0, 0, 5),
        (12, 3423, 1763, 19_078_479),
    ])
    func tileIDsFollowTheSpecsHilbertCurve(z: Int, x: Int64, y: Int64, id: UInt64) {
        #expect(PMTiles.tileID(z: z, x: x, y: y) == id)
    }

    @Test func everyTileOfAZoomHasItsOwnIDInThatZoomsRange() {
        let ids = (0..<8).flatMap { x in (0..<8).map { y in PMTiles.tileID(z: 3, x: Int64(x), y: Int64(y))! } }
        // Zoom 3 follows the 1 + 4 + 16 tiles of zooms 0 to 2.
        #expect(Set(ids) == Set(21..<85))
    }

    @Test func tilesOutsideTheirZoomsGridHaveNoID() {
        #expect(PMTiles.tileID(z: 1, x: 2, y: 0) == nil)
        #expect(PMTiles.tileID(z: 1, x: 0, y: -1) == nil)
        #expect(PMTiles.tileID(z: 32, x: 0, y: 0) == nil)
        #expect(PMTiles.tileID(z: 31, x: (1 << 31) - 1, y: 0) != nil)
    }

    @Test func varintsAreSevenBitsAByteLowFirst() {
        var bytes = Data()
        for value: UInt64 in [0, 1, 127, 128, 300] { PMTiles.appendVarint(value, to: &bytes) }
        #expect([UInt8](bytes) == [0x00, 0x01, 0x7F, 0x80, 0x01, 0xAC, 0x02])
    }

    @Test func directoryDeltaEncodesIDsAndMarksContiguousOffsetsWithZero() {
        let entries = [
            PMTiles.Entry(tileID: 5, offset: 0, length: 42, runLength: 1),
            PMTiles.Entry(tileID: 6, offset: 42, length: 10, runLength: 3),
            // An earlier copy (deduplicated) is addressed by its offset + 1.
            PMTiles.Entry(tileID: 20, offset: 0, length: 42, runLength: 1),
        ]
        let expected: [UInt8] = [3, 5, 1, 14, 1, 3, 1, 42, 10, 42, 1, 0, 1]
        #expect([UInt8](PMTiles.directory(entries)) == expected)
    }

    @Test func headerIs127LittleEndianBytesWithPositionsInTenMillionths() {
        var header = PMTiles.Header()
        header.rootOffset = 127
        header.rootLength = 300
        header.tileType = .mvt
        header.tileCompression = .gzip
        header.minZoom = 0
        header.maxZoom = 14
        header.bounds = [5.95, 45.8, 10.5, 47.8]
        header.centerZoom = 0
        header.center = [8.225, 46.8]
        let bytes = [UInt8](header.bytes)
        #expect(bytes.count == 127)
        #expect(Array(bytes[0..<8]) == Array("PMTiles".utf8) + [3])
        #expect(Array(bytes[8..<16]) == [127, 0, 0, 0, 0, 0, 0, 0])
        #expect(Array(bytes[16..<18]) == [0x2C, 0x01])
        // Clustered, gzipped directories, gzipped tiles, MVT, zooms 0–14.
        #expect(Array(bytes[96..<102]) == [1, 2, 2, 1, 0, 14])
        func int32(_ at: Int) -> Int32 {
            Int32(bitPattern: (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) })
        }
        #expect([int32(102), int32(106), int32(110), int32(114)] == [59_500_000, 458_000_000, 105_000_000, 478_000_000])
        #expect(bytes[118] == 0)
        #expect([int32(119), int32(123)] == [82_250_000, 468_000_000])
    }

    @Test func vectorTilesAreStoredGzippedWhateverTheirSourceWrapping() throws {
        let mvt = Data([0x1A, 0x05, 0x0A, 0x03, 0x61, 0x62, 0x63])
        let gzipped = try Zlib.gzip(mvt)
        #expect(try PMTilesOutput.stored(gzipped, compression: .gzip) == gzipped)
        #expect(try PMTilesOutput.stored(mvt, compression: .gzip) == gzipped)
        #expect(try PMTilesOutput.stored(try Zlib.deflate(mvt), compression: .gzip) == gzipped)
        #expect(try PMTilesOutput.stored(mvt, compression: .none) == mvt)
    }
}
