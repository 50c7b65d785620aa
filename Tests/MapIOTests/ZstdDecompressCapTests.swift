import Foundation
import MapIO
import Testing

/// `Zstd.decompress`, which a device uses on `catalog.json.zst`: whole frames come back exactly, and a
/// small input that expands past the cap (a decompression bomb) is cut off at the cap.
@Suite struct ZstdDecompressCapTests {
    @Test func roundTripsUnderTheCap() throws {
        let plain = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 >> 3) })
        #expect(try Zstd.decompress(Zstd.compress(plain, level: 19), limit: plain.count) == plain)
    }

    @Test func refusesABombAtTheCap() throws {
        let bomb = Zstd.compress(Data(count: 64 << 20), level: 19)
        #expect(bomb.count < 64 << 10)
        #expect(throws: ArchiveError.tooLarge(entry: "decompressed data", limit: 1 << 20)) { try Zstd.decompress(bomb, limit: 1 << 20) }
    }

    @Test func refusesATruncatedFrame() throws {
        let frame = Zstd.compress(Data(repeating: 7, count: 100_000) + Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0) }))
        #expect(throws: ArchiveError.self) { try Zstd.decompress(frame.prefix(frame.count / 2), limit: 1 << 20) }
    }
}
