import Testing

@testable import mappack

/// Table columns are measured in terminal cells, not characters (issue 43): a CJK character takes
/// two cells, so a column after a Japanese name lines up with the one after a Latin name.
@Suite struct DisplayWidthTests {
    @Test(arguments: [
        ("Zürich", 6), ("東京", 4), ("チューリッヒ", 12), ("서울", 4), ("a\u{200B}b", 2), ("Ｆｕｌｌ", 8),
        // Emoji drawn as pictures: by default, by U+FE0F, a flag's pair, a joined sequence, a skin tone.
        ("🇨🇭", 2), ("🚀", 2), ("🪐", 2), ("⚡", 2), ("❤\u{FE0F}", 2), ("#\u{FE0F}\u{20E3}", 2), ("👨\u{200D}👩\u{200D}👧", 2), ("👍🏽", 2),
        // Shown as text: a plain digit or sign, a heart without U+FE0F, a combining accent on its letter.
        ("#1", 2), ("❤", 1), ("e\u{301}", 1), ("ﾊﾝ", 2),
    ])
    func widthIsInTerminalCells(_ text: String, _ cells: Int) {
        #expect(text.displayWidth == cells)
    }

    @Test func columnsAfterCJKNamesLineUp() {
        var table = TextTable([("REGION", .left), ("NAME", .left), ("ON DISK", .right)])
        table.add(["europe/ch", "スイス", "12 KiB"])
        table.add(["europe/ch/zh", "Zürich", "4 KiB"])
        table.add(["asia/jp", "日本国", "100 KiB"])
        let lines = table.text.split(separator: "\n").map(String.init)
        // The last column is right-aligned: every line ends on the same cell.
        #expect(Set(lines.map(\.displayWidth)).count == 1, "\(lines)")
    }
}
