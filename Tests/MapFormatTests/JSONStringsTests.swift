import Foundation
import Testing

@testable import MapFormat

/// `JSONStrings.object`, the in-place reader of a region's names, agrees with `JSONDecoder` on the
/// objects it accepts and refuses what is not an object of strings.
@Suite struct JSONStringsTests {
    @Test(arguments: [
        #"{}"#, #"{"en":"Zurich","de":"Zürich"}"#, #" { "fr" : "Genève" , "x" : "" } "#,
        #"{"q":"a \"quoted\" \\ name\n\u00e9\ud83d\uddfa"}"#, #"{"ja":"東京"}"#,
    ])
    func agreesWithJSONDecoder(text: String) throws {
        let expected = try JSONDecoder().decode([String: String].self, from: Data(text.utf8))
        #expect(JSONStrings.object(text) == expected)
    }

    @Test(arguments: [
        "", "[]", #""en""#, "null", #"{"en":1}"#, #"{"en":null}"#, #"{"en":"a","en":"b"}"#, #"{"en":"a"} x"#,
        #"{"en":"a""#, #"{"en" "a"}"#, #"{"en":"\x"}"#, #"{"en":{"x":"y"}}"#, "{\"en\":\"a\u{0}\"}",
    ])
    func refusesWhatIsNotAnObjectOfStrings(text: String) {
        #expect(JSONStrings.object(text) == nil)
    }
}
