/// The one grammar for strings from catalogs, recipes and manifests that become file or folder
/// names (`<name>-<mapVersion>/`, `.<name>-<mapVersion>.build.json`, shard folders) or could:
/// map versions, catalog ids, recipe and image names, and each `/`-separated part of a region id.
///
/// A name is 1 to 128 bytes of ASCII letters, digits, `.`, `_`, `-` and `+`, starts with a letter or
/// a digit and holds no `..`. So it never is or holds a path separator, a parent reference, a NUL or
/// a control character, never hides (leading `.`) and never reads as an option (leading `-`).
/// Every value mappack itself writes fits (`2026.11.0`, `demo-world`, `europe/ch/be`).
public enum PathName {
    /// Longest name accepted, in bytes.
    public static let maxLength = 128

    /// Why `text` is not a valid name; nil when it is.
    public static func problem(_ text: String) -> String? {
        problem(bytes: text.utf8.span)
    }

    /// Why `text` is not a valid region id (names joined by single `/`); nil when it is. The id as a
    /// whole is at most 1024 bytes.
    public static func regionIDProblem(_ text: String) -> String? {
        let bytes = text.utf8.span
        if bytes.isEmpty { return "is empty" }
        if bytes.count > 1024 { return "is longer than 1024 bytes" }
        var start = 0
        for index in 0...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: "/") {
            if let reason = problem(bytes: bytes.extracting(start..<index)) {
                return index == bytes.count && start == 0 ? reason : "has a part that \(reason)"
            }
            start = index + 1
        }
        return nil
    }

    private static func problem(bytes: Span<UInt8>) -> String? {
        guard !bytes.isEmpty else { return "is empty" }
        if bytes.count > maxLength { return "is longer than \(maxLength) bytes" }
        if !isAlphanumeric(bytes[0]) { return "does not start with a letter or digit" }
        var previousDot = false
        for index in bytes.indices {
            let byte = bytes[index]
            let dot = byte == UInt8(ascii: ".")
            if dot && previousDot { return "holds '..'" }
            previousDot = dot
            if !(isAlphanumeric(byte) || dot || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")) {
                return "holds a character other than ASCII letters, digits, '.', '_', '-' and '+'"
            }
        }
        return nil
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
    }

    /// The sentence an error shows after the offending value.
    public static let rule = "a name is 1-128 ASCII letters, digits, '.', '_', '-' or '+', starting with a letter or digit, without '..'"
}
