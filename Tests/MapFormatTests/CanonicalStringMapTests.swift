import Foundation
import Testing

@testable import MapFormat

/// `CanonicalJSON.text(of:)`, the region rows' names spelled without a `JSONEncoder`, gives the bytes
/// `CanonicalJSON.encode` gives, on the maps it spells itself and on those it hands to the encoder.
@Suite struct CanonicalStringMapTests {
    @Test(
        arguments: [
            [:], ["en": "Zurich"], ["en": "Zurich", "de": "Zürich", "fr": "Zurich", "it": "Zurigo"],
            ["ja": "ワリー及びフテュナ", "ko": "왈리스 퓌튀나", "zh": "瓦利斯和富图纳", "ru": "Уоллес и Футана"],
            ["pt": "a", "pt-br": "b", "p": "c", "a-b": "d", "ab": "e", "a": "f", "zh-hant": "g", "z": "h"],
            ["en": "a/b <c> & 'd' ~ ` ! ?"], ["en": ""],
            // Handed to the encoder: escapes, control bytes, upper case, digits, other keys.
            ["en": "a \"quoted\" name"], ["en": "back\\slash"], ["en": "tab\there"], ["en": "line\u{2028}sep"], ["en": "del\u{7F}"],
            ["zh-Hant": "x", "zh": "y"], ["es-419": "x", "es": "y"], ["": "empty key"], ["a_b": "x", "ab": "y"],
        ] as [[String: String]])
    func spellsAsTheEncoder(names: [String: String]) throws {
        let expected = String(decoding: try CanonicalJSON.encode(names), as: UTF8.self)
        #expect(try CanonicalJSON.text(of: names) == expected)
    }
}

/// `StorePath.problem(in:)`, one pass over the bytes, names the rule the three-pass check it replaced
/// named, for every path built from the pieces that break or nearly break a rule.
@Suite struct StorePathOnePassTests {
    /// The check as it was written before (three passes), kept as the reference.
    static func reference(_ text: String) -> StorePath.Problem? {
        let bytes = Array(text.utf8)
        let slash = UInt8(ascii: "/")
        let dot = UInt8(ascii: ".")
        let count = bytes.count
        if count > 0 && bytes[0] == slash { return .absolute }
        if count == 0 { return .empty }
        for index in 0..<count where bytes[index] == 0 || bytes[index] == UInt8(ascii: "\\") { return .forbiddenByte }
        var componentStart = 0
        for index in 0...count where index == count || bytes[index] == slash {
            let length = index - componentStart
            if length == 2 && bytes[componentStart] == dot && bytes[componentStart + 1] == dot { return .climbs }
            if length == 0 || (length == 1 && bytes[componentStart] == dot) { return .emptyComponent }
            componentStart = index + 1
        }
        if count > StorePath.maxLength { return .tooLong }
        return nil
    }

    @Test func agreesWithTheReference() {
        let pieces = ["a", ".", "..", "...", ".a", "a.", "", "/", "\\", "\u{0}", "é", "tiles"]
        var checked = 0
        for first in pieces {
            for second in pieces {
                for third in pieces {
                    for path in [first + second + third, first + "/" + second + "/" + third, first + "/" + second + third] {
                        #expect(StorePath.problem(path) == Self.reference(path), "\(path.debugDescription)")
                        checked += 1
                    }
                }
            }
        }
        for path in [
            String(repeating: "a", count: 1025), String(repeating: "a/", count: 600), String(repeating: "a", count: 1024) + "/..",
            String(repeating: "a", count: 1030) + "\\",
        ] {
            #expect(StorePath.problem(path) == Self.reference(path))
            checked += 1
        }
        #expect(checked > 5000)
    }
}
