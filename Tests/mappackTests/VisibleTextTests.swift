import Testing

@testable import mappack

/// `String.visible` and `visibleKeepingLines`: text without a control character passes as it is,
/// whatever its script (the byte check that skips the scalar walk), and every control still shows
/// escaped, next to non-ASCII text too.
@Suite struct VisibleTextTests {
    @Test(arguments: ["Zürich — fits", "日本 (東京)", "Ελλάδα\n\tline", "plain ascii", "é\u{2027}\u{202F}\u{2065}\u{206A}\u{A0}"])
    func textWithoutControlsStaysAsItIs(_ text: String) {
        #expect(text.visibleKeepingLines == text)
        #expect(text.visible == (text.contains("\n") ? text.replacing("\n", with: "\\u{A}").replacing("\t", with: "\\u{9}") : text))
    }

    @Test(arguments: [
        ("Zürich\u{1B}[2J", "Zürich\\u{1B}[2J"), ("ü\u{7F}", "ü\\u{7F}"), ("ü\u{85}x", "ü\\u{85}x"), ("—\u{9B}", "—\\u{9B}"),
        ("ü\u{2028}", "ü\\u{2028}"), ("ü\u{202E}cba", "ü\\u{202E}cba"), ("ü\u{2066}", "ü\\u{2066}"), ("ü\u{2069}", "ü\\u{2069}"),
        ("ü\r", "ü\\u{D}"),
    ])
    func controlsNextToNonASCIITextAreEscaped(_ text: String, _ shown: String) {
        #expect(text.visibleKeepingLines == shown)
        #expect(text.visible == shown)
    }
}
