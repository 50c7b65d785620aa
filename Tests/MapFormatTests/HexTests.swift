import Foundation
import MapFormat
import Testing

/// The one hex reader and writer every digest, escape and blob goes through.
@Suite struct HexTests {
    /// Every byte value, with what each strictness makes of it.
    @Test func digitValuesFollowEachStrictness() {
        for byte in UInt8.min...UInt8.max {
            let expected: UInt8? =
                switch byte {
                case 0x30...0x39: byte - 0x30
                case 0x61...0x66: byte - 0x61 + 10
                default: nil
                }
            #expect(Hex.value(of: byte) == expected, "byte \(byte)")
            let upper: UInt8? = (0x41...0x46).contains(byte) ? byte - 0x41 + 10 : expected
            #expect(Hex.value(of: byte, letters: .anyCase) == upper, "byte \(byte)")
        }
    }

    @Test func digestWordsRoundTrip() throws {
        let text = "0123456789abcdef00ff10fe2ad3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5"
        let words = try #require(parse(text))
        #expect(words.0 == 0x0123_4567_89AB_CDEF)
        #expect(words.1 == 0x00FF_10FE_2AD3_B4C5)
        #expect(Hex.encode(words: words.0, words.1, words.2, words.3) == text)
        #expect(Hex.encode(Hex.decode(text) ?? []) == text)
    }

    /// Each of the 64 positions refuses each byte that is not a lower-case digit, whichever of
    /// the SWAR lanes it falls in.
    @Test(arguments: [
        UInt8(ascii: "A"), UInt8(ascii: "F"), UInt8(ascii: "g"), UInt8(ascii: "G"), UInt8(ascii: "/"), UInt8(ascii: ":"),
        UInt8(ascii: "`"), UInt8(ascii: "@"), 0x00, 0x7F, 0x80, 0xB0, 0xE6, 0xFF, UInt8(ascii: " "),
    ])
    func digestWordsRefuseAnyOtherByteAnywhere(_ bad: UInt8) {
        for position in 0..<64 {
            var digits = Array(repeating: UInt8(ascii: "a"), count: 64)
            digits[position] = bad
            unsafe #expect(Hex.words256(digits.span.bytes) == nil, "byte \(bad) at \(position)")
            #expect(!Hex.isDigits(digits, count: 64))
        }
    }

    @Test(arguments: [0, 1, 63, 65, 128])
    func digestWordsRefuseOtherCounts(_ count: Int) {
        let digits = Array(repeating: UInt8(ascii: "7"), count: count)
        unsafe #expect(Hex.words256(digits.span.bytes) == nil)
        #expect(!Hex.isDigits(digits, count: 64))
    }

    @Test func decodeTakesEitherCaseAndRefusesOddOrOtherText() {
        #expect(Hex.decode("00Ff7a") == [0x00, 0xFF, 0x7A])
        #expect(Hex.decode("") == [])
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("zz") == nil)
        #expect(Hex.isDigits("ABCD".utf8, count: 4, letters: .anyCase))
        #expect(!Hex.isDigits("ABCD".utf8, count: 4))
    }

    /// `BundleDigest` and the digest words agree, and keep digests lower-case only.
    @Test func bundleDigestsUseTheSameRule() {
        let hex = String(repeating: "0123456789abcdef", count: 4)
        #expect(BundleDigest("sha256:" + hex)?.hex == hex)
        #expect(BundleDigest("sha256:" + hex.uppercased()) == nil)
        #expect(BundleDigest(validatingHex: Array(hex.utf8)) == BundleDigest("sha256:" + hex))
    }

    private func parse(_ text: String) -> (UInt64, UInt64, UInt64, UInt64)? {
        unsafe Hex.words256(Array(text.utf8).span.bytes)
    }
}
