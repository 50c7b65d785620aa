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
}
