/// Bytes a bundle's files allocate, by filesystem block size, as the publisher computed them
/// (JSON: `{"4096": 1234, …}`).
///
/// A planet catalog holds one per bundle, so a table is a window on one `[Int64]`: a block-size
/// run `[count, size₀, size₁, …]` and a run of bytes at each, in the order the table was given. A
/// catalog read by `CatalogReader` keeps every table in one shared array, each distinct block-size
/// run stored once; a table built in memory has an array of its own.
public struct SizeOnDiskTable: Codable, Sendable, Equatable {
    /// The block-size and bytes runs (possibly of many tables).
    private var storage: [Int64]
    /// Where this table's block-size run starts (its count first).
    private var blockSizesAt: Int32
    /// Where this table's bytes run starts.
    private var bytesAt: Int32

    /// A table from (block size, bytes) pairs; a repeated block size keeps the last value.
    public init(_ pairs: [(blockSize: Int64, bytes: Int64)]) {
        let sorted = SizeOnDiskTable.sortedUnique(pairs)
        storage = [Int64(sorted.count)] + sorted.map(\.blockSize) + sorted.map(\.bytes)
        blockSizesAt = 0
        bytesAt = Int32(1 + sorted.count)
    }

    /// A table from JSON-style keys; keys that are not whole numbers are ignored.
    public init(strings: [String: Int64]) {
        self.init(strings.compactMap { key, value in Int64(key).map { ($0, value) } })
    }

    /// A window on shared storage that `attach(_:)` supplies later (see `SizeOnDiskTable.Builder`).
    fileprivate init(blockSizesAt: Int32, bytesAt: Int32) {
        storage = []
        self.blockSizesAt = blockSizesAt
        self.bytesAt = bytesAt
    }

    /// Pairs sorted by block size, the last of repeated block sizes kept. A handful of entries:
    /// insertion keeps them sorted without a dictionary.
    fileprivate static func sortedUnique(_ pairs: [(blockSize: Int64, bytes: Int64)]) -> [(blockSize: Int64, bytes: Int64)] {
        var sorted: [(blockSize: Int64, bytes: Int64)] = []
        sorted.reserveCapacity(pairs.count)
        for pair in pairs {
            var index = sorted.count
            while index > 0 && sorted[index - 1].blockSize > pair.blockSize { index -= 1 }
            if index > 0 && sorted[index - 1].blockSize == pair.blockSize {
                sorted[index - 1].bytes = pair.bytes
            } else {
                sorted.insert(pair, at: index)
            }
        }
        return sorted
    }

    private var count: Int { Int(storage[Int(blockSizesAt)]) }

    /// (block size, bytes) in the order stored.
    private var pairs: [(blockSize: Int64, bytes: Int64)] {
        (0..<count).map { (storage[Int(blockSizesAt) + 1 + $0], storage[Int(bytesAt) + $0]) }
    }

    /// Block sizes, ascending.
    public var blockSizes: [Int64] { pairs.sorted { $0.blockSize < $1.blockSize }.map(\.blockSize) }

    /// Bytes at each of `blockSizes`.
    public var bytes: [Int64] { pairs.sorted { $0.blockSize < $1.blockSize }.map(\.bytes) }

    /// Bytes at `blockSize`, when the publisher computed them.
    public subscript(blockSize: Int64) -> Int64? {
        let sizes = Int(blockSizesAt) + 1
        for offset in 0..<count where storage[sizes + offset] == blockSize { return storage[Int(bytesAt) + offset] }
        return nil
    }

    /// Points a table made by a `Builder` at the builder's finished storage.
    fileprivate mutating func attach(_ shared: [Int64]) { storage = shared }

    /// Equal when they give the same bytes for the same block sizes, in whatever order stored.
    /// The smallest and largest byte counts in the table (nil when it is empty), without allocating.
    public var bytesRange: (min: Int64, max: Int64)? {
        let count = count
        guard count > 0 else { return nil }
        var low = Int64.max
        var high = Int64.min
        for offset in 0..<count {
            let value = storage[Int(bytesAt) + offset]
            low = Swift.min(low, value)
            high = Swift.max(high, value)
        }
        return (low, high)
    }

    public static func == (lhs: SizeOnDiskTable, rhs: SizeOnDiskTable) -> Bool {
        lhs.count == rhs.count && lhs.pairs.allSatisfy { rhs[$0.blockSize] == $0.bytes }
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

extension SizeOnDiskTable {
    /// Collects the tables of one catalog into one shared array as a reader meets them: tables come
    /// out detached (their storage is still growing) and are attached once reading is done.
    struct Builder {
        private var storage: [Int64] = []
        /// Where the last stored block-size run starts, to reuse it when the next table has the same.
        private var lastBlockSizesAt: Int32?

        /// Starts with room for the tables `bytes` of catalog JSON typically hold (an entry takes
        /// ~14 bytes), so the array does not grow by copying; pages it does not fill are never
        /// touched, so they cost address space, not memory.
        init(bytes: Int) {
            storage.reserveCapacity(bytes / 14)
        }

        /// A detached table of (block size, bytes) `pairs`, which must name each block size once
        /// (the reader checks).
        /// Kept in the order given: lookups scan a handful of entries either way, and catalogs
        /// write every table's keys in the same order, so one block-size run serves them all.
        mutating func add(_ pairs: [(key: Int64, value: Int64)]) -> SizeOnDiskTable {
            let blockSizesAt: Int32
            if let last = lastBlockSizesAt, sameBlockSizes(at: Int(last), as: pairs) {
                blockSizesAt = last
            } else {
                blockSizesAt = Int32(storage.count)
                storage.append(Int64(pairs.count))
                for pair in pairs { storage.append(pair.key) }
                lastBlockSizesAt = blockSizesAt
            }
            let bytesAt = Int32(storage.count)
            for pair in pairs { storage.append(pair.value) }
            return SizeOnDiskTable(blockSizesAt: blockSizesAt, bytesAt: bytesAt)
        }

        private func sameBlockSizes(at position: Int, as pairs: [(key: Int64, value: Int64)]) -> Bool {
            guard storage[position] == Int64(pairs.count) else { return false }
            for (offset, pair) in pairs.enumerated() where storage[position + 1 + offset] != pair.key { return false }
            return true
        }

        /// `table` (from `add`) pointed at the finished storage.
        func attached(_ table: SizeOnDiskTable) -> SizeOnDiskTable {
            var table = table
            table.attach(storage)
            return table
        }
    }
}
