import Foundation
import MapFormat
import Testing

@Suite struct SHA256DigestTests {
    static let digits = String(repeating: "0123456789abcdef", count: 4)

    @Test(arguments: ["", String(digits.dropLast()), digits + "0", digits.uppercased(), "g" + digits.dropFirst(), "sha256:" + digits])
    func refusesAnythingButSixtyFourLowerCaseHexDigits(_ text: String) throws {
        #expect(SHA256Digest(hex: text) == nil)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([SHA256Digest].self, from: Data("[\"\(text)\"]".utf8)) }
    }

    /// Written as the bare string, so the files that hold one do not change.
    @Test func isWrittenAndReadAsTheSameString() throws {
        let digest = try #require(SHA256Digest(hex: Self.digits))
        let bytes = try CanonicalJSON.encode([digest])
        #expect(String(decoding: bytes, as: UTF8.self) == "[\"\(Self.digits)\"]")
        #expect(try JSONDecoder().decode([SHA256Digest].self, from: bytes) == [digest])
    }
}
