/// The object keys a hand-written decoder knows, packed for `JSONScanner.readKey(_:)`: each key
/// (at most 16 bytes) as its length and two zero-padded little-endian words, so matching a member's
/// key costs a few word compares and no `String`.
struct JSONKeys: Sendable {
    /// Longest key that can be listed.
    static let maxLength = 16

    /// Each key's length and its two words.
    private let entries: [(count: Int, first: UInt64, second: UInt64)]
    /// The keys as listed (for messages).
    let names: [StaticString]

    /// Packs `keys`; their positions are what `readKey(_:)` returns.
    init(_ keys: [StaticString]) {
        names = keys
        entries = keys.map { key in
            precondition(key.utf8CodeUnitCount <= JSONKeys.maxLength, "JSON key \(key) is longer than \(JSONKeys.maxLength) bytes")
            return key.withUTF8Buffer { utf8 in
                var first: UInt64 = 0, second: UInt64 = 0
                for (position, byte) in utf8.enumerated() {
                    if position < 8 { first |= UInt64(byte) << (UInt64(position) * 8) } else { second |= UInt64(byte) << (UInt64(position - 8) * 8) }
                }
                return (utf8.count, first, second)
            }
        }
    }

    /// The position of the key with these bytes, if listed.
    func position(count: Int, first: UInt64, second: UInt64) -> Int? {
        for (position, entry) in entries.enumerated() where entry.first == first && entry.count == count && entry.second == second {
            return position
        }
        return nil
    }
}
