import Foundation

/// One line of `mappack --json`: a value whose fields are the ones its schema in `Schemas/`
/// declares. `Terminal.record` adds the `"schema"` tag, so no line can go out untagged.
protocol JSONRecord: Encodable, Sendable {
    /// The name and version of its schema file (`JSONSchemas`).
    static var schema: String { get }
}

/// One event of a verb that reports its work as it goes (`Schemas/mappack-events.schema.json`);
/// each has an `event` field naming it.
protocol JSONEvent: JSONRecord {
    var event: String { get }
}

extension JSONEvent {
    static var schema: String { JSONSchemas.events }
}

// swift-format-ignore: UseSynthesizedInitializer
/// A field that is always there: `null` when it has no value, where a plain optional would be
/// left out (the schemas say which fields are nullable and which are optional).
@propertyWrapper
struct Nullable<Value: Encodable & Sendable>: Encodable, Sendable {
    var wrappedValue: Value?

    // Written out: without it, the memberwise init of a type holding a `@Nullable` takes a `Nullable`.
    init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

/// The bytes of one `--json` line.
enum JSONLine {
    /// `record` with its schema tag, keys sorted, and a line feed; or, when it cannot be encoded
    /// (a number that is not finite), a `failed` event saying so and `encoded` false: a line is
    /// never dropped without a word.
    static func encode(_ record: some JSONRecord) -> (line: Data, encoded: Bool) {
        do {
            return (try sortedWithSchema(record), true)
        } catch {
            let failed = FailedEvent(error: "mappack could not write a \(type(of: record).schema) line: \(error)", exitCode: 1)
            // Strings and an integer always encode; the literal is the same line, should it not.
            let line =
                (try? sortedWithSchema(failed))
                ?? Data(#"{"error":"mappack could not write a JSON line","event":"failed","exitCode":1,"schema":"mappack-events/1"}"#.utf8 + [0x0A])
            return (line, false)
        }
    }

    /// Encoded, then its keys sorted as they always were (`JSONSerialization`'s `.sortedKeys`:
    /// case-insensitive, so `mappackVersion` before `mapVersion`), and the schema tag added.
    /// `KeyOrder` puts the encoder's keys in that order itself; the round trip through
    /// `JSONSerialization` (which compares keys through ICU) is left for keys it cannot order,
    /// and cost 46 µs a line: a quarter of a `build --json`'s user time at 6,796 bundles.
    private static func sortedWithSchema<Record: JSONRecord>(_ record: Record) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let encoded = try encoder.encode(record)
        if let line = KeyOrder.sorted(Array(encoded), adding: ("schema", Record.schema)) { return Data(line + [0x0A]) }
        return try sortedThroughSerialization(record)
    }

    /// The same line through `JSONSerialization`, as every line was made before `KeyOrder`.
    static func sortedThroughSerialization<Record: JSONRecord>(_ record: Record) throws -> Data {
        let encoded = try JSONEncoder().encode(record)
        guard var object = try JSONSerialization.jsonObject(with: encoded) as? [String: Any] else {
            throw EncodingError.invalidValue(record, .init(codingPath: [], debugDescription: "a JSON line must be an object"))
        }
        object["schema"] = Record.schema
        return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) + Data([0x0A])
    }
}

/// `JSONEncoder`'s compact output with every object's keys in `JSONSerialization`'s `.sortedKeys`
/// order: ignoring case, runs of digits by their value (`a9` before `a10`). Values are copied as
/// the encoder wrote them (which is how `JSONSerialization` writes them back, slashes unescaped).
/// Only for keys of ASCII letters and digits, where that order needs no collation tables; for any
/// other key, or two keys that differ only in case, it gives nil and the caller takes the slow road.
enum KeyOrder {
    /// `json` (one object) with its keys and those of every object inside it sorted, and `extra`
    /// added to the outer object as a string member; nil when some key cannot be ordered here.
    static func sorted(_ json: [UInt8], adding extra: (key: String, value: String)) -> [UInt8]? {
        var reader = Reader(bytes: json)
        var extraValue: [UInt8] = []
        appendString(extra.value, to: &extraValue)
        guard json.first == UInt8(ascii: "{"), let line = reader.object(adding: (Array(extra.key.utf8), extraValue)), reader.index == json.count
        else { return nil }
        return line
    }

    /// True when `a` sorts before `b`; nil when neither does (equal but for case or leading zeros).
    static func precedes(_ a: [UInt8], _ b: [UInt8]) -> Bool? {
        var i = 0
        var j = 0
        while i < a.count, j < b.count {
            if isDigit(a[i]), isDigit(b[j]) {
                let (runA, endA) = digitRun(a, from: i)
                let (runB, endB) = digitRun(b, from: j)
                if runA.count != runB.count { return runA.count < runB.count }
                if runA != runB { return runA.lexicographicallyPrecedes(runB) }
                if endA - i != endB - j { return nil }
                i = endA
                j = endB
                continue
            }
            let x = a[i] | 0x20
            let y = b[j] | 0x20
            if x != y { return x < y }
            i += 1
            j += 1
        }
        if a.count - i != b.count - j { return a.count - i < b.count - j }
        return nil
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// The digits from `start` without leading zeros, and where the run ends.
    private static func digitRun(_ bytes: [UInt8], from start: Int) -> (ArraySlice<UInt8>, Int) {
        var end = start
        while end < bytes.count, isDigit(bytes[end]) { end += 1 }
        var first = start
        while first < end - 1, bytes[first] == UInt8(ascii: "0") { first += 1 }
        return (bytes[first..<end], end)
    }

    /// True for a key this order covers: ASCII letters and digits only.
    private static func isPlainKey(_ key: [UInt8]) -> Bool {
        !key.isEmpty && key.allSatisfy { isDigit($0) || ($0 | 0x20 >= UInt8(ascii: "a") && $0 | 0x20 <= UInt8(ascii: "z")) }
    }

    /// `text` as a JSON string the way the encoder writes one (only `"`, `\\` and controls escaped).
    private static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), byte]
            case 0..<0x20: out += Array(String(format: "\\u%04x", byte).utf8)
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Walks the encoder's compact output (no spaces), copying it with objects reordered.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        /// The value at `index`, reordered; nil when a key cannot be ordered.
        mutating func value() -> [UInt8]? {
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "{"): return object(adding: nil)
            case UInt8(ascii: "["): return array()
            case UInt8(ascii: "\""):
                let start = index
                guard skipString() else { return nil }
                return Array(bytes[start..<index])
            default:
                let start = index
                while index < bytes.count, bytes[index] != UInt8(ascii: ","), bytes[index] != UInt8(ascii: "}"), bytes[index] != UInt8(ascii: "]") {
                    index += 1
                }
                guard index > start else { return nil }
                // The one number the two write differently: the encoder keeps the sign of -0.0.
                if bytes[start..<index].elementsEqual("-0".utf8) { return Array("0".utf8) }
                return Array(bytes[start..<index])
            }
        }

        /// Past the string at `index` (escapes included); false when it does not end.
        mutating func skipString() -> Bool {
            index += 1
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\\"): index += 2
                case UInt8(ascii: "\""):
                    index += 1
                    return true
                default: index += 1
                }
            }
            return false
        }

        mutating func array() -> [UInt8]? {
            var out: [UInt8] = [UInt8(ascii: "[")]
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return out + [UInt8(ascii: "]")]
            }
            while true {
                guard let element = value() else { return nil }
                out += element
                guard index < bytes.count else { return nil }
                let separator = bytes[index]
                index += 1
                out.append(separator)
                if separator == UInt8(ascii: "]") { return out }
                guard separator == UInt8(ascii: ",") else { return nil }
            }
        }

        mutating func object(adding extra: (key: [UInt8], value: [UInt8])?) -> [UInt8]? {
            var members: [(key: [UInt8], value: [UInt8])] = []
            if let extra { members.append(extra) }
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
            } else {
                while true {
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
                    let start = index + 1
                    guard skipString() else { return nil }
                    let key = Array(bytes[start..<index - 1])
                    guard isPlainKey(key), index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                    index += 1
                    guard let member = value() else { return nil }
                    members.append((key, member))
                    guard index < bytes.count else { return nil }
                    let separator = bytes[index]
                    index += 1
                    if separator == UInt8(ascii: "}") { break }
                    guard separator == UInt8(ascii: ",") else { return nil }
                }
            }
            var tie = false
            members.sort { a, b in
                guard let before = KeyOrder.precedes(a.key, b.key) else {
                    tie = true
                    return false
                }
                return before
            }
            if tie { return nil }
            var out: [UInt8] = [UInt8(ascii: "{")]
            for (position, member) in members.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                out.append(UInt8(ascii: "\""))
                out += member.key
                out += [UInt8(ascii: "\""), UInt8(ascii: ":")]
                out += member.value
            }
            out.append(UInt8(ascii: "}"))
            return out
        }
    }
}
