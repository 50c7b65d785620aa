import Foundation

/// The one JSON writer of `--json`: encodes a record into compact JSON whose objects list their
/// keys in `JSONLineEncoder.precedes` order, written once, never parsed back.
///
/// The values are written as `JSONEncoder` writes them (`.withoutEscapingSlashes`): a number
/// as its `description` without a trailing `.0` (but `-0` as `0`, as `JSONSerialization` wrote
/// it), strings with `"`, `\` and control characters escaped. A number that is not finite
/// cannot be written and throws `EncodingError.invalidValue`.
struct JSONLineEncoder {
    /// `value`, with `extra` added to its outer object as a string member (the schema tag).
    static func encode(_ value: some Encodable, adding extra: (key: String, value: String)? = nil) throws -> [UInt8] {
        let root = Node()
        try value.encode(to: NodeEncoder(node: root, codingPath: []))
        if let extra {
            guard case .object(var members) = root.content else {
                throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "a JSON line must be an object"))
            }
            members[extra.key] = Node(.string(extra.value))
            root.content = .object(members)
        }
        var out: [UInt8] = []
        out.reserveCapacity(256)
        root.write(to: &out)
        return out
    }

    /// The defined order of an object's keys, the one `JSONSerialization`'s `.sortedKeys` gave
    /// every line before: ASCII letters compare ignoring case, a run of digits by its value
    /// (`a9` before `a10`, then the shorter run first when the values are equal), other
    /// characters (in byte order) before digits and digits before letters (as ICU puts `_`
    /// first); keys still equal compare by their bytes with the letters' case swapped (`url`
    /// before `URL`), so the order is total. It is ICU's for keys of ASCII letters and digits,
    /// which every record's are (`JSONLineTests`).
    static func precedes(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var i = 0
        var j = 0
        while i < x.count, j < y.count {
            if isDigit(x[i]), isDigit(y[j]) {
                let (runA, endA) = digitRun(x, from: i)
                let (runB, endB) = digitRun(y, from: j)
                if runA.count != runB.count { return runA.count < runB.count }
                if runA != runB { return runA.lexicographicallyPrecedes(runB) }
                if endA - i != endB - j { return endA - i < endB - j }
                i = endA
                j = endB
                continue
            }
            let p = (rank(x[i]), x[i] | (isLetter(x[i]) ? 0x20 : 0))
            let q = (rank(y[j]), y[j] | (isLetter(y[j]) ? 0x20 : 0))
            if p != q { return p < q }
            i += 1
            j += 1
        }
        if x.count - i != y.count - j { return x.count - i < y.count - j }
        return x.map(swapCase).lexicographicallyPrecedes(y.map(swapCase))
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    private static func isLetter(_ byte: UInt8) -> Bool { byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z") }
    private static func swapCase(_ byte: UInt8) -> UInt8 { isLetter(byte) ? byte ^ 0x20 : byte }
    /// Other characters (0) before digits (1) before letters (2).
    private static func rank(_ byte: UInt8) -> Int { isLetter(byte) ? 2 : isDigit(byte) ? 1 : 0 }

    /// The digits from `start` without leading zeros, and where the run ends.
    private static func digitRun(_ bytes: [UInt8], from start: Int) -> (ArraySlice<UInt8>, Int) {
        var end = start
        while end < bytes.count, isDigit(bytes[end]) { end += 1 }
        var first = start
        while first < end - 1, bytes[first] == UInt8(ascii: "0") { first += 1 }
        return (bytes[first..<end], end)
    }

    /// One value as the record encodes it; a container is filled in as the record's `encode`
    /// goes on, so it is a reference its nested containers share.
    fileprivate final class Node {
        enum Content {
            case empty
            case null
            case bool(Bool)
            /// The number's text, as it is written.
            case number(String)
            case string(String)
            case array([Node])
            case object([String: Node])
        }

        var content: Content

        init(_ content: Content = .empty) { self.content = content }

        func write(to out: inout [UInt8]) {
            switch content {
            // A value that encoded nothing is an empty object, as `JSONEncoder` writes it.
            case .empty: out += [UInt8(ascii: "{"), UInt8(ascii: "}")]
            case .null: out += Array("null".utf8)
            case .bool(let value): out += Array((value ? "true" : "false").utf8)
            case .number(let text): out += Array(text.utf8)
            case .string(let text): Node.writeString(text, to: &out)
            case .array(let elements):
                out.append(UInt8(ascii: "["))
                for (position, element) in elements.enumerated() {
                    if position > 0 { out.append(UInt8(ascii: ",")) }
                    element.write(to: &out)
                }
                out.append(UInt8(ascii: "]"))
            case .object(let members):
                out.append(UInt8(ascii: "{"))
                for (position, key) in members.keys.sorted(by: JSONLineEncoder.precedes).enumerated() {
                    if position > 0 { out.append(UInt8(ascii: ",")) }
                    Node.writeString(key, to: &out)
                    out.append(UInt8(ascii: ":"))
                    members[key]?.write(to: &out)
                }
                out.append(UInt8(ascii: "}"))
            }
        }

        private static let hexDigits = Array("0123456789abcdef".utf8)

        /// `text` as a JSON string: `"` and `\` escaped, control characters as `\b \f \n \r \t`
        /// or `\u00xx`, everything else (slashes and non-ASCII too) as it is.
        static func writeString(_ text: String, to out: inout [UInt8]) {
            out.append(UInt8(ascii: "\""))
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), byte]
                case 0x08: out += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
                case 0x0C: out += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
                case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
                case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
                case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
                case 0..<0x20:
                    out += Array(#"\u00"#.utf8)
                    out += [hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
                default: out.append(byte)
                }
            }
            out.append(UInt8(ascii: "\""))
        }
    }
}

/// The `Encoder` a record writes itself into: every container fills in one `Node`.
private struct NodeEncoder: Encoder {
    let node: JSONLineEncoder.Node
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object = node.content {} else { node.content = .object([:]) }
        return KeyedEncodingContainer(KeyedNodeContainer<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = node.content {} else { node.content = .array([]) }
        return UnkeyedNodeContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleNodeContainer(node: node, codingPath: codingPath) }
}

/// A number's text as `JSONEncoder` writes it; `-0` as `0`.
private func numberText<Number: BinaryFloatingPoint & CustomStringConvertible>(_ value: Number, codingPath: [any CodingKey]) throws -> String {
    guard value.isFinite else {
        throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "\(value) is not a number JSON can hold"))
    }
    if value == 0 { return "0" }
    var text = value.description
    if text.hasSuffix(".0") { text.removeLast(2) }
    return text
}

/// A primitive as a node's content; nil for a type that encodes itself.
private func primitive(_ value: some Encodable, codingPath: [any CodingKey]) throws -> JSONLineEncoder.Node.Content? {
    switch value {
    case let text as String: .string(text)
    case let flag as Bool: .bool(flag)
    case let number as Int: .number(String(number))
    case let number as Int64: .number(String(number))
    case let number as Int32: .number(String(number))
    case let number as UInt64: .number(String(number))
    case let number as UInt32: .number(String(number))
    case let number as UInt: .number(String(number))
    case let number as Double: .number(try numberText(number, codingPath: codingPath))
    case let number as Float: .number(try numberText(number, codingPath: codingPath))
    default: nil
    }
}

/// A child node holding `value`.
private func child(_ value: some Encodable, codingPath: [any CodingKey]) throws -> JSONLineEncoder.Node {
    if let content = try primitive(value, codingPath: codingPath) { return JSONLineEncoder.Node(content) }
    let node = JSONLineEncoder.Node()
    try value.encode(to: NodeEncoder(node: node, codingPath: codingPath))
    return node
}

private struct KeyedNodeContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: JSONLineEncoder.Node
    let codingPath: [any CodingKey]

    private func set(_ key: Key, _ member: JSONLineEncoder.Node) {
        guard case .object(var members) = node.content else { return }
        // Let go of the node's copy first, so the dictionary is changed in place.
        node.content = .empty
        members[key.stringValue] = member
        node.content = .object(members)
    }

    mutating func encodeNil(forKey key: Key) throws { set(key, JSONLineEncoder.Node(.null)) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        set(key, try child(value, codingPath: codingPath + [key]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = JSONLineEncoder.Node()
        set(key, nested)
        return NodeEncoder(node: nested, codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = JSONLineEncoder.Node()
        set(key, nested)
        return NodeEncoder(node: nested, codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { superEncoder(forKey: Key(stringValue: "super")!) }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let nested = JSONLineEncoder.Node()
        set(key, nested)
        return NodeEncoder(node: nested, codingPath: codingPath + [key])
    }
}

private struct UnkeyedNodeContainer: UnkeyedEncodingContainer {
    let node: JSONLineEncoder.Node
    let codingPath: [any CodingKey]

    var count: Int {
        guard case .array(let elements) = node.content else { return 0 }
        return elements.count
    }

    /// The key of the next element, for `codingPath`.
    private var nextKey: IndexKey { IndexKey(intValue: count) }

    private func append(_ element: JSONLineEncoder.Node) {
        guard case .array(var elements) = node.content else { return }
        node.content = .empty
        elements.append(element)
        node.content = .array(elements)
    }

    mutating func encodeNil() throws { append(JSONLineEncoder.Node(.null)) }

    mutating func encode<T: Encodable>(_ value: T) throws { append(try child(value, codingPath: codingPath + [nextKey])) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = JSONLineEncoder.Node()
        let path = codingPath + [nextKey]
        append(nested)
        return NodeEncoder(node: nested, codingPath: path).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = JSONLineEncoder.Node()
        let path = codingPath + [nextKey]
        append(nested)
        return NodeEncoder(node: nested, codingPath: path).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let nested = JSONLineEncoder.Node()
        let path = codingPath + [nextKey]
        append(nested)
        return NodeEncoder(node: nested, codingPath: path)
    }
}

private struct SingleNodeContainer: SingleValueEncodingContainer {
    let node: JSONLineEncoder.Node
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.content = .null }

    mutating func encode<T: Encodable>(_ value: T) throws {
        if let content = try primitive(value, codingPath: codingPath) {
            node.content = content
        } else {
            try value.encode(to: NodeEncoder(node: node, codingPath: codingPath))
        }
    }
}

/// An array index in a coding path.
private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}
