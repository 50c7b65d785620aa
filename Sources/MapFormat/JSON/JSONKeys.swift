/// The object keys a hand-written decoder knows, packed for `JSONScanner.readKey(_:)`: each key
/// of at most 16 bytes as its length and two zero-padded little-endian words, so matching a
/// member's key costs a few word compares and no `String`. Longer keys (rare) are compared byte by
/// byte against `names`.
struct JSONKeys: Sendable {
    /// Longest key matched by its words.
    static let maxLength = 16

    /// Each key's length and its two words.
    private let entries: [(count: Int, first: UInt64, second: UInt64)]
    /// The keys as listed (for messages).
    let names: [String]

    /// Packs `keys`; their positions are what `readKey(_:)` returns.
    init(_ keys: [String]) {
        names = keys
        entries = keys.map { key in
            // A longer key's count never reaches `position`: no words to match.
            guard key.utf8.count <= JSONKeys.maxLength else { return (key.utf8.count, 0, 0) }
            var first: UInt64 = 0
            var second: UInt64 = 0
            for (position, byte) in key.utf8.enumerated() {
                if position < 8 { first |= UInt64(byte) << (UInt64(position) * 8) } else { second |= UInt64(byte) << (UInt64(position - 8) * 8) }
            }
            return (key.utf8.count, first, second)
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
