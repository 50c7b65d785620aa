import Foundation

/// Encodes and decodes mappack's JSON: UTF-8, sorted keys, no insignificant whitespace,
/// so the same value always gives the same bytes (and so the same hashes).
public enum CanonicalJSON {
    /// Canonical bytes of `value`.
    public static func encode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// The canonical text of a string map (a region's names), as `encode` gives it: spelled here when
    /// every key is lower-case ASCII letters and hyphens and no value needs an escape (no quote,
    /// backslash or control byte; no byte 0xE2, which starts the line separators some encoders escape),
    /// which orders and spells alike in any encoder; `encode` otherwise. A first start writes thousands
    /// of region rows, and a `JSONEncoder` per row was a tenth of its time.
    public static func text(of strings: [String: String]) throws -> String {
        func plainKey(_ key: String) -> Bool {
            !key.isEmpty && key.utf8.allSatisfy { ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || $0 == UInt8(ascii: "-") }
        }
        func plainValue(_ value: String) -> Bool {
            value.utf8.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") && $0 != 0x7F && $0 != 0xE2 }
        }
        guard strings.allSatisfy({ plainKey($0.key) && plainValue($0.value) }) else {
            return String(decoding: try encode(strings), as: UTF8.self)
        }
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(strings.reduce(2) { $0 + $1.key.utf8.count + $1.value.utf8.count + 6 })
        for (index, member) in strings.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }).enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: member.key.utf8)
            bytes.append(contentsOf: #"":""#.utf8)
            bytes.append(contentsOf: member.value.utf8)
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Decodes `data`, turning Foundation's errors into a `JSONFileError` naming `file`. A key repeated
    /// within one object is refused (Foundation keeps one of them silently; other readers may keep the other).
    /// With `integersOnly` (signatures and timestamps, whose numbers are all counters), a number
    /// written with a fraction or an exponent (`2e2`, `200.0`) is refused: Foundation reads `2e2` as
    /// the integer 200, a reader elsewhere might not, and a signed counter must mean one thing.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data, file: String, integersOnly: Bool = false) throws -> T {
        if let (key, _) = JSONScanner.firstDuplicateKey(in: data) {
            throw JSONFileError(
                file: file, codingPath: key, reason: "the key \"\(key)\" appears twice in one object; readers would disagree on its value")
        }
        if integersOnly, let number = firstNonIntegerNumber(in: data) {
            throw JSONFileError(
                file: file, codingPath: "",
                reason: "the number \(number) is not written as an integer (no fraction, no exponent); every number here is a counter")
        }
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch let error as DecodingError {
            throw JSONFileError(file: file, error: error, data: data)
        }
    }

    /// The first number outside strings whose spelling has a fraction or an exponent, nil when none has.
    static func firstNonIntegerNumber(in data: Data) -> String? {
        var inString = false
        var escaped = false
        var index = data.startIndex
        while index < data.endIndex {
            let byte = data[index]
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                index += 1
            } else if byte == UInt8(ascii: "\"") {
                inString = true
                index += 1
            } else if byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                var end = index
                var integer = true
                while end < data.endIndex, Self.numberBytes.contains(data[end]) {
                    let next = data[end]
                    if next == UInt8(ascii: ".") || next == UInt8(ascii: "e") || next == UInt8(ascii: "E") { integer = false }
                    end += 1
                }
                if !integer { return String(decoding: data[index..<end].prefix(40), as: UTF8.self) }
                index = end
            } else {
                index += 1
            }
        }
        return nil
    }

    private static let numberBytes = Set("0123456789+-.eE".utf8)
}
