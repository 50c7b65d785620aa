import Foundation
import Testing

@testable import MapFormat

/// An unsigned in-place base's id is read at every open from the manifest's end, in windows that
/// double from 64 KiB: wherever the id field falls (inside the first window, its key or its digits
/// cut by a window's edge, far before the end), the id found is the one `idInCanonicalBytes` reads
/// from the field, and only the windows needed are read.
@Suite struct ManifestIDFromEndTests {
    static let id = String(repeating: "ab", count: 32)
    static let key = ImageManifest.Field.idFieldStart

    /// Manifest-like bytes whose id field ends `after` bytes before the end (filler after it).
    static func bytes(after: Int) -> Data {
        let field = Data(#""imageID":"\#(id)","#.utf8)
        return Data(String(repeating: "x", count: 300_000).utf8) + field + Data(String(repeating: "y", count: after).utf8)
    }

    /// The id `imageIDFromEnd` finds in `data`, and the reads it made (offset, count).
    static func search(_ data: Data, failingAt failure: Int? = nil) -> (id: String?, reads: [(offset: UInt64, count: Int)]) {
        var reads: [(offset: UInt64, count: Int)] = []
        let id = ManifestReader.imageIDFromEnd(size: Int64(data.count)) { offset, count in
            reads.append((offset, count))
            if reads.count == failure { return nil }
            return data.subdata(in: Int(offset)..<Int(offset) + count)
        }
        return (id, reads)
    }

    /// The id by the plain rule: `idInCanonicalBytes` at the last place the key starts.
    static func expectedID(_ data: Data) -> String? {
        let bytes = [UInt8](data)
        let key = [UInt8](Self.key)
        guard bytes.count >= key.count else { return nil }
        for start in stride(from: bytes.count - key.count, through: 0, by: -1)
        where bytes[start] == key[0] && bytes[start..<start + key.count].elementsEqual(key) {
            return ImageManifest.idInCanonicalBytes(data[start...])
        }
        return nil
    }

    /// The windows read for a manifest of `size` bytes when the field is found in the `n`th.
    static func windows(_ n: Int, size: Int) -> [Int] {
        (0..<n).map { min(Int(ManifestReader.firstIDWindow) << $0, size) }
    }

    static let window = Int(ManifestReader.firstIDWindow)
    /// The field is 77 bytes: its key's 11, the id's 64, a quote and a comma.
    static let field = 77

    /// How far before the end the field ends, and how many windows are read to find it.
    static let placements: [(after: Int, windowsRead: Int)] = [
        (0, 1), (100, 1),
        // The field's id cut by the first window's edge, then by the second's.
        (window - 40, 2), (window - 10, 2), (window, 2), (2 * window - 20, 3),
        // The key cut by the first window's edge, then by the second's.
        (window - 70, 2), (2 * window - 70, 3),
        // The key ending where the first window starts (outside it), and starting there (inside).
        (window - field + 11, 2), (window - field, 1),
        // Far before the end.
        (200_000, 3),
    ]

    @Test(arguments: placements)
    func findsTheIDWhereverItsFieldFalls(_ after: Int, _ windowsRead: Int) {
        let data = Self.bytes(after: after)
        let (id, reads) = Self.search(data)
        #expect(id == Self.id)
        #expect(reads.map(\.count) == Self.windows(windowsRead, size: data.count))
        #expect(reads.allSatisfy { Int($0.offset) + $0.count == data.count })
    }

    /// The last window read is the whole file, however far its end is from the last doubling.
    @Test func aFileWithoutTheFieldHasNoID() {
        let data = Data(String(repeating: "z", count: 200_000).utf8)
        let (id, reads) = Self.search(data)
        #expect(id == nil)
        #expect(reads.map(\.count) == Self.windows(3, size: data.count))
    }

    /// A read that fails gives no id, even when a wider one would have found it.
    @Test func aFailedReadGivesNoID() {
        let data = Self.bytes(after: Self.window)
        #expect(Self.search(data).id == Self.id)
        #expect(Self.search(data, failingAt: 2).id == nil)
        #expect(Self.search(data, failingAt: 1).reads.count == 1)
    }

    /// Over files that hold the key any number of times (none, overlapping ones, one cut off by the end,
    /// one whose id is escaped or too long), at any offset around the window edges: the id found is the
    /// one at the last place the key starts.
    @Test func agreesWithTheLastKeyEverywhere() {
        var generator = SystemRandomNumberGenerator()
        let pieces = [
            Self.key, Data(#"abc""#.utf8), Data(#"a\"b""#.utf8), Data(#""imageID":"imageID":"x""#.utf8), Self.key.prefix(5),
            Data(String(repeating: "f", count: 140).utf8) + Data("\"".utf8), Data(#""imageID":""#.utf8) + Data(#"ok","#.utf8),
        ]
        var found = 0
        for round in 0..<400 {
            let size = [100, 40_000, Self.window, 2 * Self.window + 300, 300_000][round % 5]
            var data = Data(repeating: UInt8(ascii: "."), count: size)
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                let piece = pieces[Int.random(in: 0..<pieces.count, using: &generator)]
                // Near a window's edge or the end more often than elsewhere.
                let edges = [size - Self.window, size - 2 * Self.window, size - piece.count, Int.random(in: 0..<size, using: &generator)]
                let place = edges[Int.random(in: 0..<edges.count, using: &generator)] + Int.random(in: -20...20, using: &generator)
                guard place >= 0, place + piece.count <= size else { continue }
                data.replaceSubrange(place..<place + piece.count, with: piece)
            }
            let expected = Self.expectedID(data)
            #expect(Self.search(data).id == expected, "round \(round)")
            if expected != nil { found += 1 }
        }
        #expect(found > 20)
    }
}
