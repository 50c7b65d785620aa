import Foundation
import MapIO

/// The translations of one GNU gettext `.mo` file (msgid → msgstr), e.g. Debian's `iso_3166-1.mo`.
///
/// Layout (gettext manual, "The Format of GNU MO Files"): magic `0x950412de` in the file's byte order,
/// revision, string count N, offset of the original-strings table, offset of the translations table;
/// each table holds N (length, offset) pairs of 32-bit words.
struct GettextCatalog: Sendable {
    /// Translations keyed by their untranslated string.
    let translations: [String: String]

    /// Parses the `.mo` file at `path`.
    init(path: String) throws(DemoWorldError) {
        let data: Data
        do {
            data = try ReadableFile.contents(of: path, limit: 64 << 20)
        } catch {
            throw DemoWorldError.file(error)
        }
        try self.init(bytes: [UInt8](data), path: path)
    }

    /// Parses `.mo` bytes; `path` only names the file in errors.
    init(bytes: [UInt8], path: String) throws(DemoWorldError) {
        func word(_ offset: Int, bigEndian: Bool) throws(DemoWorldError) -> Int {
            guard offset >= 0, offset + 4 <= bytes.count else {
                throw DemoWorldError.badTranslationFile(path: path, reason: "truncated at byte \(offset)")
            }
            let b = bytes[offset..<offset + 4].map(UInt32.init)
            let value = bigEndian ? (b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3]) : (b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0])
            return Int(value)
        }
        let magic = try word(0, bigEndian: false)
        let bigEndian: Bool
        switch magic {
        case 0x9504_12DE: bigEndian = false
        case 0xDE12_0495: bigEndian = true
        default: throw DemoWorldError.badTranslationFile(path: path, reason: "not a gettext .mo file (magic \(String(magic, radix: 16)))")
        }
        let revision = try word(4, bigEndian: bigEndian)
        // Major revisions other than 0 and 1 may change the layout; minor ones only add tables.
        guard revision >> 16 <= 1 else {
            throw DemoWorldError.badTranslationFile(path: path, reason: "unsupported .mo revision \(revision >> 16)")
        }
        let count = try word(8, bigEndian: bigEndian)
        let originals = try word(12, bigEndian: bigEndian)
        let translated = try word(16, bigEndian: bigEndian)

        func string(table: Int, index: Int) throws(DemoWorldError) -> String {
            let length = try word(table + 8 * index, bigEndian: bigEndian)
            let offset = try word(table + 8 * index + 4, bigEndian: bigEndian)
            guard offset + length <= bytes.count else {
                throw DemoWorldError.badTranslationFile(path: path, reason: "string \(index) runs past the end of the file")
            }
            return String(decoding: bytes[offset..<offset + length], as: UTF8.self)
        }

        var translations: [String: String] = [:]
        translations.reserveCapacity(count)
        for index in 0..<count {
            let original = try string(table: originals, index: index)
            // The empty msgid is the catalog header; a 0x04 separates a msgctxt, which names here never use.
            if original.isEmpty || original.contains("\u{04}") { continue }
            // Plural entries hold NUL-separated forms; the singular is the name.
            let key = String(original.split(separator: "\0", omittingEmptySubsequences: false)[0])
            let value = String(try string(table: translated, index: index).split(separator: "\0", omittingEmptySubsequences: false)[0])
            if !value.isEmpty { translations[key] = value }
        }
        self.translations = translations
    }

    /// The translation of `original`, nil when the file has none.
    subscript(original: String) -> String? { translations[original] }
}
