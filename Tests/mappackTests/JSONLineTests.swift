import Foundation
import Testing

@testable import mappack

/// The `--json` lines are typed records (issue 35 item 5): each encodes as its schema's fields,
/// keys sorted as they always were, and a record that cannot be encoded is never dropped
/// without a word (before, `Terminal.record` returned on a failed `JSONSerialization` quietly).
@Suite struct JSONLineTests {
    @Test func aRecordThatCannotBeEncodedBecomesAFailedEvent() throws {
        let (line, encoded) = JSONLine.encode(UpdateProgressEvent(phase: "download", fraction: .nan))
        #expect(!encoded)
        #expect(line.last == UInt8(ascii: "\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: line) as? [String: Any])
        #expect(object["event"] as? String == "failed")
        #expect(object["schema"] as? String == "mappack-events/1")
        #expect(object["exitCode"] as? Int == 1)
        #expect((object["error"] as? String)?.contains("mappack-events/1") == true, "\(object)")
    }

    @Test func nullableFieldsAreNullAndOptionalOnesLeftOut() throws {
        let updated = JSONLine.encode(UpdatedEvent(mapVersion: nil, storage: "/s"))
        #expect(updated.encoded)
        #expect(
            String(decoding: updated.line, as: UTF8.self) == #"{"event":"updated","mapVersion":null,"schema":"mappack-events/1","storage":"/s"}"#
                + "\n")
        let keys = JSONLine.encode(KeygenEvent(public: "k.pub", minisignPublic: "k.minisign.pub", private: nil))
        #expect(
            String(decoding: keys.line, as: UTF8.self)
                == #"{"event":"keygen","minisignPublic":"k.minisign.pub","public":"k.pub","schema":"mappack-events/1"}"# + "\n")
    }

    /// `JSONSerialization`'s order (case-insensitive), which scripts diffing the output have seen
    /// all along, not `JSONEncoder`'s byte order.
    @Test func keysKeepTheirOrder() throws {
        let record = VersionRecord(version: "1.0", libraries: ["a/b"])
        #expect(
            String(decoding: JSONLine.encode(record).line, as: UTF8.self) == #"{"libraries":["a/b"],"schema":"mappack-version/1","version":"1.0"}"#
                + "\n")
        let seed = InspectRecord(
            format: "f", name: "n", imageID: "i", catalog: "c", mapVersion: "1", built: "b", mappackVersion: "0.1", blockSize: 4096, bundles: 0,
            files: 0, signature: "unsigned", problems: 0, regions: [], cacheSeed: nil)
        let text = String(decoding: JSONLine.encode(seed).line, as: UTF8.self)
        let mappackVersion = try #require(text.range(of: "\"mappackVersion\""))
        let mapVersion = try #require(text.range(of: "\"mapVersion\""))
        #expect(mappackVersion.lowerBound < mapVersion.lowerBound, "\(text)")
        #expect(text.contains(#""cacheSeed":null"#), "\(text)")
    }

    /// Keys an ICU-free order must still put where `JSONSerialization` puts them.
    struct Tricky: JSONRecord {
        static let schema = "mappack-test/1"
        struct Inner: Encodable, Sendable {
            let zeta = 1
            let alpha = [2, 3]
            let b10 = "x"
            let b9 = "y"
            enum CodingKeys: String, CodingKey {
                case zeta
                case alpha = "Alpha"
                case b10, b9
            }
        }
        let mappackVersion = "0.1"
        let mapVersion = "2026.11.0"
        let a10 = 10
        let a9 = 9
        let zed = true
        let empty: [Int] = []
        let none: [String: Int] = [:]
        let text = "quote \" back \\ slash / tab \t bell \u{7} é ☃ \u{2028}"
        let numbers = [
            0.1, 1e21, -0.0, 7.6812721490859985, 123_456_789_012, 1.0, 2.5e-7, 1e-7, 123456.789, 1.7976931348623157e308, Double.leastNonzeroMagnitude,
            -3.5,
        ]
        let integers = [Int64.max, Int64.min, 0, -1]
        let nested = [Inner(), Inner()]
        @Nullable var gone: String?
        enum CodingKeys: String, CodingKey {
            case mappackVersion, mapVersion, a10, a9
            case zed = "Zed"
            case empty, none, text, numbers, integers, nested, gone
        }
    }

    /// A key with an underscore (ICU orders it before letters) and two keys equal but for case.
    struct NeedsCollation: JSONRecord {
        static let schema = "mappack-test/1"
        let underscore = 1
        let lower = "u"
        let upper = "U"
        let a = 2
        enum CodingKeys: String, CodingKey {
            case underscore = "_x"
            case lower = "url"
            case upper = "URL"
            case a
        }
    }

    /// The line as every line was made before `JSONLineEncoder`: `JSONEncoder`, then a round trip
    /// through `JSONSerialization` for its `.sortedKeys` order (ICU's collation); the writer must
    /// give the same bytes without it.
    static func throughSerialization<Record: JSONRecord>(_ record: Record) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        var object = try #require(try JSONSerialization.jsonObject(with: try encoder.encode(record)) as? [String: Any])
        object["schema"] = Record.schema
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// `JSONLineEncoder` makes the bytes the `JSONSerialization` round trip made, for every kind of
    /// record and value (but a number's text: it keeps `JSONEncoder`'s, which the lines had).
    @Test func theWriterMakesTheBytesSerializationMade() throws {
        let records: [any JSONRecord] = [
            Tricky(), NeedsCollation(),
            BuildDoneEvent(
                image: "/o/a b/bench-1", packed: nil, imageID: String(repeating: "ab", count: 32), mapVersion: "1", regions: 3, upToDate: false,
                files: 5, bundles: 6, downloadedBytes: 1 << 40, sizeOnDiskInBytes: 4096, outputs: [.init(format: "directory", path: "/o/x")],
                seconds: 7.6812721490859985),
            UpdatedEvent(mapVersion: nil, storage: "/s"),
            KeygenEvent(public: "k.pub", minisignPublic: "k.minisign.pub", private: nil),
            VersionRecord(version: "1.0", libraries: ["a/b", "c"]),
            FailedEvent(error: "no \"such\" file\n\u{1b}\u{8}\u{c}\r", exitCode: 2),
            PlanRecord(
                recipe: "r.yaml", catalog: "c", mapVersion: "1", blockSize: 4096, downloadBytes: 1, totalBundleBytes: 2, storeBundleBytes: 3,
                cacheSeedBundleBytes: 4, bundles: 5, bundlesCached: 6, sizeOnDiskInBytes: nil, cacheSeedBytes: 7, capacity: 8, fits: true,
                overshootBytes: nil, cache: "/c",
                regions: [.init(id: "europe/ch", name: "Schweiz", broughtBy: "europe/ch", sizeOnDiskInBytes: 9, downloadBytes: 10)],
                bundleList: [.init(digest: "ab", size: 11, cached: false, forStore: true, regions: ["europe/ch"])]),
        ]
        for record in records {
            func both<R: JSONRecord>(_ record: R) throws -> (String, String) {
                (String(decoding: JSONLine.encode(record).line, as: UTF8.self), try Self.throughSerialization(record))
            }
            let (written, reference) = try both(record)
            #expect(written == reference, "\(type(of: record))")
        }
    }

    /// The order is total and defined for any key, ICU's for letters and digits.
    @Test(arguments: [
        ("a9", "a10"), ("a9", "a09"), ("a09", "a10"), ("mappackVersion", "mapVersion"), ("_x", "a"), ("_x", "0"), ("0", "a"), ("url", "URL"),
        ("B", "b_c"), ("a", "aa"), ("Alpha", "b10"),
    ])
    func keysFollowTheDefinedOrder(before: String, after: String) {
        #expect(JSONLineEncoder.precedes(before, after))
        #expect(!JSONLineEncoder.precedes(after, before))
        #expect(!JSONLineEncoder.precedes(before, before))
    }
}
