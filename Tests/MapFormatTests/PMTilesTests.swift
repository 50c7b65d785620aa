import Foundation
import MapFormat
import Testing

/// The PMTiles v3 format (`MapFormat/PMTiles`) against the values the spec gives: tile ids on the
/// Hilbert curve and back, varints, directories and the header, written and parsed back.
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

    // MARK: - Reading back

    @Test func everyTileIDOfTheFirstZoomsGivesItsTileBack() {
        for z in 0...6 {
            for x in 0..<Int64(1 << z) {
                for y in 0..<Int64(1 << z) {
                    let id = PMTiles.tileID(z: z, x: x, y: y)!
                    let tile = PMTiles.tile(id: id)
                    #expect(tile?.z == z && tile?.x == x && tile?.y == y, "\(z)/\(x)/\(y) → \(id) → \(String(describing: tile))")
                }
            }
        }
        #expect(PMTiles.tile(id: 19_078_479).map { [$0.z, Int($0.x), Int($0.y)] } == [12, 3423, 1763])
        let deepest = PMTiles.tileID(z: 31, x: (1 << 31) - 1, y: 0)!
        #expect(PMTiles.tile(id: deepest).map { [$0.z, Int($0.x), Int($0.y)] } == [31, (1 << 31) - 1, 0])
        #expect(PMTiles.tile(id: UInt64.max) == nil)
    }

    @Test func directoriesDecodeToTheEntriesTheyWereWrittenFrom() throws {
        let entries = [
            PMTiles.Entry(tileID: 5, offset: 0, length: 42, runLength: 1),
            PMTiles.Entry(tileID: 6, offset: 42, length: 10, runLength: 3),
            PMTiles.Entry(tileID: 20, offset: 0, length: 42, runLength: 1),
            PMTiles.Entry(tileID: 1 << 40, offset: 1 << 33, length: 300, runLength: 0),
        ]
        #expect(try PMTiles.entries(ofDirectory: PMTiles.directory(entries)) == entries)
    }

    @Test(arguments: [
        ([UInt8]([200, 1]), "claims 200 entries in 2 bytes"),
        ([1, 5, 1, 42], "the directory ends inside offset 0"),
        ([1, 5, 1, 42, 0], "the first entry's offset is 0"),
        ([1] + [UInt8](repeating: 0xFF, count: 10) + [1, 1, 1, 1], "tile id 0 is a varint over 64 bits"),
    ])
    func damagedDirectoriesAreRefused(bytes: [UInt8], message: String) {
        #expect {
            try PMTiles.entries(ofDirectory: Data(bytes))
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    @Test func theHeaderParsesBackToWhatWasWritten() throws {
        var header = PMTiles.Header()
        header.rootOffset = 127
        header.rootLength = 300
        header.tileDataOffset = 1 << 33
        header.tileType = .webp
        header.tileCompression = .none
        header.maxZoom = 14
        header.bounds = [5.95, 45.8, 10.5, 47.8]
        header.center = [-8.225, -46.8]
        let parsed = try PMTiles.Header(parsing: header.bytes)
        #expect(parsed.bytes == header.bytes)
        #expect(parsed.tileType == .webp && parsed.tileDataOffset == 1 << 33 && parsed.center == [-8.225, -46.8])
    }
}
