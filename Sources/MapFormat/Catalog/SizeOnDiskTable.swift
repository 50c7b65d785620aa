/// Bytes a bundle's files allocate, by filesystem block size, as the publisher computed them
/// (JSON: `{"4096": 1234, …}`). Kept as one small sorted array rather than a dictionary: a
/// planet catalog holds one per bundle, and plan time is dominated by decoding them.
public struct SizeOnDiskTable: Codable, Sendable, Equatable {
    /// Block sizes, ascending, and the bytes at each.
    public private(set) var blockSizes: [Int64]
    public private(set) var bytes: [Int64]

    /// A table from (block size, bytes) pairs; a repeated block size keeps the last value.
    public init(_ pairs: [(blockSize: Int64, bytes: Int64)]) {
        blockSizes = []
        bytes = []
        blockSizes.reserveCapacity(pairs.count)
        bytes.reserveCapacity(pairs.count)
        // A handful of entries: insertion keeps it sorted without a dictionary.
        for pair in pairs {
            var index = blockSizes.count
            while index > 0 && blockSizes[index - 1] > pair.blockSize { index -= 1 }
            if index > 0 && blockSizes[index - 1] == pair.blockSize {
                bytes[index - 1] = pair.bytes
            } else {
                blockSizes.insert(pair.blockSize, at: index)
                bytes.insert(pair.bytes, at: index)
            }
        }
    }

    /// A table from JSON-style keys; keys that are not whole numbers are ignored.
    public init(strings: [String: Int64]) {
        self.init(strings.compactMap { key, value in Int64(key).map { ($0, value) } })
    }

    /// Bytes at `blockSize`, when the publisher computed them.
    public subscript(blockSize: Int64) -> Int64? {
        for (index, size) in blockSizes.enumerated() where size == blockSize { return bytes[index] }
        return nil
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode([String: Int64].self)
        for key in raw.keys where Int64(key) == nil {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "sizeOnDisk key '\(key)' is not a block size in bytes")
        }
        if Set(raw.keys.compactMap { Int64($0) }).count != raw.count {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "sizeOnDisk names one block size twice")
        }
        self.init(strings: raw)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Dictionary(uniqueKeysWithValues: zip(blockSizes.map(String.init), bytes)))
    }
}
