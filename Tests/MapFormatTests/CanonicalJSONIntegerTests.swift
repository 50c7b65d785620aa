import Foundation
import Testing

@testable import MapFormat

/// `CanonicalJSON.decode(integersOnly:)`, the reader of signatures and timestamps: a number with a
/// fraction or an exponent is refused wherever it is, while digits, `e` and `.` inside strings are not
/// numbers (issue 41).
@Suite struct CanonicalJSONIntegerTests {
    struct Counter: Decodable { let version: Int64 }

    @Test(arguments: [#"{"version":2e2}"#, #"{"version":200.0}"#, #"{"version":2E2}"#, #"{"version":-1.5e-3}"#])
    func numberWithAFractionOrAnExponentIsRefused(_ text: String) throws {
        #expect(CanonicalJSON.firstNonIntegerNumber(in: Data(text.utf8)) != nil)
        #expect(throws: JSONFileError.self) { try CanonicalJSON.decode(Counter.self, from: Data(text.utf8), file: "sig", integersOnly: true) }
        // Foundation alone reads some of them as the integer.
        if text == #"{"version":2e2}"# { #expect(try CanonicalJSON.decode(Counter.self, from: Data(text.utf8), file: "sig").version == 200) }
    }

    @Test(arguments: [#"{"version":200}"#, #"{"version":-3,"note":"2e2 1.5 \"3e4\" \\"}"#, #"{"version":0}"#])
    func integersAndNumbersInStringsAreAccepted(_ text: String) throws {
        #expect(CanonicalJSON.firstNonIntegerNumber(in: Data(text.utf8)) == nil)
    }
}
