/// Text from inputs (region names and ids from catalogs and manifests, file names, error messages
/// that echo them) as it is printed for people. A terminal acts on control characters: ESC starts
/// sequences that clear the screen or set the window title, BEL rings, CR and LF start a line, so a
/// name holding them could forge table rows or take over the terminal. Printed, each control
/// character is shown as its Swift escape instead, `\u{1B}` for ESC, `\u{D}` for CR, `\u{9B}` for
/// the C1 CSI: visible, unambiguous, and what the name holds. The bidirectional embeddings,
/// overrides and isolates (U+202A–U+202E, U+2066–U+2069) are escaped too: they reorder what a
/// terminal shows after them (Trojan Source), so a name could make a line read as something it is
/// not. `--json` output needs none of this (JSON keeps the name as it is, for programs).
extension String {
    /// This text on one line: every C0 control character (TAB, CR and LF too), DEL, every C1
    /// control character, the Unicode line and paragraph separators (U+2028, U+2029) and the
    /// bidirectional controls escaped. For a table cell or a name inside a line.
    var visible: String { escapingControls(keepingLines: false) }

    /// This text with control characters escaped as `visible` does, but LF and TAB kept: for whole
    /// messages, which may be several lines. `Terminal` passes everything it prints through it.
    var visibleKeepingLines: String { escapingControls(keepingLines: true) }

    private func escapingControls(keepingLines: Bool) -> String {
        // Most text holds no control (printable ASCII, names in other scripts, a dash): found from
        // the bytes and left as it is (a planet plan's table is 100 KB, and the walk below costs ~100
        // instructions a scalar).
        if !holdsControl(keepingLines: keepingLines) { return self }
        var out = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            let value = scalar.value
            let control =
                value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029 || (0x202A...0x202E).contains(value)
                || (0x2066...0x2069).contains(value)
            if !control || (keepingLines && (scalar == "\n" || scalar == "\t")) {
                out.append(scalar)
            } else {
                out.append(contentsOf: "\\u{\(String(value, radix: 16, uppercase: true))}".unicodeScalars)
            }
        }
        return String(out)
    }

    /// Whether any scalar `escapingControls` escapes is here, seen from the UTF-8 bytes: C0 controls
    /// and DEL are single bytes; C1 controls are `C2 80`–`C2 9F`; U+2028–U+202E are `E2 80 A8`–`AE`;
    /// U+2066–U+2069 are `E2 81 A6`–`A9`.
    private func holdsControl(keepingLines: Bool) -> Bool {
        let bytes = utf8.span
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x80 {
                if byte == 0x7F || (byte < 0x20 && !(keepingLines && (byte == 0x0A || byte == 0x09))) { return true }
            } else if byte == 0xC2 {
                if index + 1 < bytes.count, (0x80...0x9F).contains(bytes[index + 1]) { return true }
            } else if byte == 0xE2, index + 2 < bytes.count {
                let (second, third) = (bytes[index + 1], bytes[index + 2])
                if second == 0x80 && (0xA8...0xAE).contains(third) { return true }
                if second == 0x81 && (0xA6...0xA9).contains(third) { return true }
            }
            index += 1
        }
        return false
    }
}
