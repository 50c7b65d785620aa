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

    /// Held as words, yet every spelling gives back the digits it was read from, in their order.
    @Test(arguments: [digits, String(repeating: "0", count: 64), String(repeating: "f", count: 64), String(digits.reversed())])
    func spellsTheDigitsItWasReadFrom(_ text: String) throws {
        let digest = try #require(SHA256Digest(hex: text))
        #expect(digest.hex == text && digest.description == text)
        var appended: [UInt8] = [1]
        digest.appendHex(to: &appended)
        #expect(appended == [1] + Array(text.utf8))
        #expect(digest.bytes == Hex.decode(text))
        unsafe #expect(SHA256Digest(hex: text.utf8.span.bytes) == digest)
        let bundle = BundleDigest(sha256: digest)
        #expect(bundle.description == "sha256:" + text && bundle.sha256 == digest && BundleDigest("sha256:" + text) == bundle)
    }

    /// Equal, ordered and hashed by all 256 bits, the first digit most significant.
    @Test func comparesByValueDigitByDigit() throws {
        let low = try #require(SHA256Digest(hex: String(repeating: "0", count: 63) + "1"))
        let high = try #require(SHA256Digest(hex: "1" + String(repeating: "0", count: 63)))
        let lastWord = try #require(SHA256Digest(hex: String(repeating: "0", count: 63) + "2"))
        #expect(low < high && low < lastWord && !(high < low))
        #expect(Set([low, high, lastWord, low]).count == 3)
        #expect(BundleDigest(sha256: low) < BundleDigest(sha256: high))
    }
}
