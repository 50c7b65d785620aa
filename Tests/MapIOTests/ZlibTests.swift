import Foundation
import MapIO
import Testing

/// `Zlib.gzip`: the gzip streams PMTiles directories and tiles are stored in.
@Suite struct ZlibTests {
    @Test func gzipIsAGzipStreamThatInflatesBackAndIsTheSameEveryTime() throws {
        let text = Data(String(repeating: "Switzerland Liechtenstein Austria ", count: 200).utf8)
        let first = try Zlib.gzip(text)
        #expect(Zlib.wrapping(of: first) == .gzip)
        #expect(first.count < text.count)
        #expect(try Zlib.inflate(first, limit: text.count) == text)
        #expect(try Zlib.gzip(text) == first)
        // No modification time in the header (bytes 4–7), so a rebuild gives the same bytes.
        #expect([UInt8](first)[4..<8] == [0, 0, 0, 0])
        #expect(try Zlib.inflate(try Zlib.gzip(Data()), limit: 1) == Data())
    }
}
