import Foundation
import MapFetch
import MapFormat
import Testing

/// The `multipart/byteranges` reader (issue 21): what it hands on is written into a file being
/// assembled, so a body that strays from the format stops it, keeping only the parts before.
@Suite struct ByteRangesParserTests {
    static let file = Array("The quick brown fox jumps over the lazy dog, again and again.".utf8)
    static let boundary = "00000000000000000001"

    /// A body as nginx writes it for `ranges` of `file`, with `change` applied to each part's head.
    static func body(
        _ ranges: [ClosedRange<Int64>], boundary: String = boundary, total: Int = file.count, close: Bool = true,
        part: (Int, String) -> String = { $1 }
    ) -> [UInt8] {
        var out: [UInt8] = []
        for (index, range) in ranges.enumerated() {
            let head =
                "\r\n--\(boundary)\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes \(range.lowerBound)-\(range.upperBound)/\(total)\r\n\r\n"
            out += Array(part(index, head).utf8)
            out += file[Int(range.lowerBound)...Int(range.upperBound)]
        }
        if close { out += Array("\r\n--\(boundary)--\r\n".utf8) }
        return out
    }

    /// Feeds `body` in pieces of `step` bytes; returns the file as assembled (zeros where nothing came) and the parser.
    static func parse(_ body: [UInt8], asked: [ClosedRange<Int64>], step: Int = .max) -> ([UInt8], ByteRangesParser) {
        var parser = ByteRangesParser(boundary: boundary, asked: asked, total: Int64(file.count))
        var assembled = [UInt8](repeating: 0, count: file.count)
        var index = 0
        while index < body.count {
            let end = min(body.count, index + min(step, body.count))
            let piece = Array(body[index..<end])
            let going = unsafe parser.consume(piece.span.bytes) { bytes, offset in
                for at in 0..<bytes.byteCount { assembled[Int(offset) + at] = bytes[byteAt: at] }
                return true
            }
            if !going { break }
            index = end
        }
        return (assembled, parser)
    }

    static func expected(_ ranges: [ClosedRange<Int64>]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: file.count)
        for range in ranges { for at in range { out[Int(at)] = file[Int(at)] } }
        return out
    }

    @Test(arguments: [1, 2, 7, 64, Int.max])
    func readsNginxBodiesInAnyPieces(step: Int) {
        let asked: [ClosedRange<Int64>] = [0...3, 10...18, 40...(Int64(Self.file.count) - 1)]
        let (assembled, parser) = Self.parse(Self.body(asked), asked: asked, step: step)
        #expect(parser.problem == nil)
        #expect(parser.isFinished)
        #expect(parser.parts == asked)
        #expect(assembled == Self.expected(asked))
    }

    @Test func takesAPartThatMergesNeighbouringRanges() {
        let asked: [ClosedRange<Int64>] = [0...3, 6...9, 20...25]
        let (assembled, parser) = Self.parse(Self.body([0...9, 20...25]), asked: asked)
        #expect(parser.isFinished)
        #expect(assembled == Self.expected([0...9, 20...25]))
    }

    @Test func aDamagedBoundaryStopsAfterThePartBeforeIt() {
        let asked: [ClosedRange<Int64>] = [0...3, 10...18]
        let body = Self.body(asked) { index, head in
            index == 1 ? head.replacingOccurrences(of: Self.boundary, with: String(Self.boundary.dropLast()) + "2") : head
        }
        let (assembled, parser) = Self.parse(body, asked: asked)
        #expect(parser.problem?.contains("boundary") == true, "\(parser.problem ?? "")")
        #expect(!parser.isFinished)
        #expect(assembled == Self.expected([0...3]))
    }

    @Test func aPartThatWasNotAskedForStopsTheParse() {
        let asked: [ClosedRange<Int64>] = [0...3, 10...18]
        let (assembled, parser) = Self.parse(Self.body([0...3, 11...18]), asked: asked)
        #expect(parser.problem?.contains("not asked for") == true, "\(parser.problem ?? "")")
        #expect(assembled == Self.expected([0...3]))
    }

    @Test func aRepeatedPartStopsTheParse() {
        let asked: [ClosedRange<Int64>] = [0...3, 10...18]
        let (_, parser) = Self.parse(Self.body([0...3, 0...3]), asked: asked)
        #expect(parser.problem?.contains("overlaps") == true, "\(parser.problem ?? "")")
    }

    @Test func anotherTotalSizeStopsTheParse() {
        let asked: [ClosedRange<Int64>] = [0...3]
        let (assembled, parser) = Self.parse(Self.body(asked, total: Self.file.count + 1), asked: asked)
        #expect(parser.problem?.contains("Content-Range") == true, "\(parser.problem ?? "")")
        #expect(assembled == Self.expected([]))
    }

    @Test func aPartWithoutContentRangeStopsTheParse() {
        let asked: [ClosedRange<Int64>] = [0...3]
        let body = Self.body(asked) { _, head in head.replacingOccurrences(of: "Content-Range: bytes 0-3/61\r\n", with: "") }
        let (_, parser) = Self.parse(body, asked: asked)
        #expect(parser.problem?.contains("without Content-Range") == true, "\(parser.problem ?? "")")
    }

    @Test func bareLineFeedsAreRefused() {
        let asked: [ClosedRange<Int64>] = [0...3]
        let body = Self.body(asked) { _, head in head.replacingOccurrences(of: "octet-stream\r\n", with: "octet-stream\n") }
        let (_, parser) = Self.parse(body, asked: asked)
        #expect(parser.problem?.contains("CRLF") == true, "\(parser.problem ?? "")")
    }

    @Test func aBodyThatEndsEarlyIsNotFinished() {
        let asked: [ClosedRange<Int64>] = [0...3, 10...18]
        let full = Self.body(asked)
        for cut in [10, full.count - 30, full.count - 3] {
            let (_, parser) = Self.parse(Array(full.prefix(cut)), asked: asked)
            #expect(!parser.isFinished, "cut at \(cut)")
            #expect(parser.problem == nil)
        }
        let (_, unclosed) = Self.parse(Self.body(asked, close: false), asked: asked)
        #expect(!unclosed.isFinished)
    }

    @Test func textBeforeTheFirstBoundaryIsRefused() {
        let asked: [ClosedRange<Int64>] = [0...3]
        let (_, parser) = Self.parse(Array("preamble\r\n".utf8) + Self.body(asked), asked: asked)
        #expect(parser.problem?.contains("does not start") == true, "\(parser.problem ?? "")")
    }

    @Test func anOverlongHeaderLineIsRefused() {
        let asked: [ClosedRange<Int64>] = [0...3]
        let body = Self.body(asked) { _, head in head.replacingOccurrences(of: "octet-stream", with: String(repeating: "x", count: 2000)) }
        let (_, parser) = Self.parse(body, asked: asked)
        #expect(parser.problem?.contains("longer than") == true, "\(parser.problem ?? "")")
    }

    @Test func boundariesAreReadFromContentType() {
        #expect(ByteRangesParser.boundary(ofContentType: "multipart/byteranges; boundary=00000000000000000001") == "00000000000000000001")
        #expect(ByteRangesParser.boundary(ofContentType: "Multipart/ByteRanges;boundary=\"a b'c\"") == "a b'c")
        #expect(ByteRangesParser.boundary(ofContentType: "multipart/byteranges") == nil)
        #expect(ByteRangesParser.boundary(ofContentType: "multipart/mixed; boundary=abc") == nil)
        #expect(ByteRangesParser.boundary(ofContentType: "multipart/byteranges; boundary=") == nil)
        #expect(ByteRangesParser.boundary(ofContentType: "multipart/byteranges; boundary=\(String(repeating: "a", count: 71))") == nil)
        #expect(ByteRangesParser.boundary(ofContentType: "multipart/byteranges; boundary=a; boundary=b") == nil)
        #expect(ByteRangesParser.boundary(ofContentType: "multipart/byteranges; boundary=a\u{7F}b") == nil)
    }

    @Test func contentRangesAreStrict() {
        #expect(ByteRangesParser.contentRange("bytes 0-3/61", total: 61) == 0...3)
        #expect(ByteRangesParser.contentRange("bytes 3-0/61", total: 61) == nil)
        #expect(ByteRangesParser.contentRange("bytes 0-61/61", total: 61) == nil)
        #expect(ByteRangesParser.contentRange("bytes 0-3/*", total: 61) == nil)
        #expect(ByteRangesParser.contentRange("bytes -3/61", total: 61) == nil)
        #expect(ByteRangesParser.contentRange("bytes +0-3/61", total: 61) == nil)
        #expect(ByteRangesParser.contentRange("items 0-3/61", total: 61) == nil)
    }
}
