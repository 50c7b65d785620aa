/// A bundle's zchunk form (`mappack publish --chunked`, issue 21): a `.zck` file whose data
/// section is, byte for byte, the bundle's `.tar.zst` (zchunk compresses every chunk as one zstd
/// frame, and frames concatenate), so the header's data digest is the bundle's digest and an
/// update can fetch only the chunks it lacks, by range, then check the bundle's SHA-256 as usual.
/// An optional field of a catalog bundle (`"chunked"`); readers that do not know it ignore it.
public struct ChunkedBundle: Codable, Sendable, Equatable {
    /// Location of the `.zck` file, relative to the catalog's URL.
    public var url: String
    /// Bytes of the whole `.zck` file (header + the bundle's bytes).
    public var size: Int64
    /// Bytes of the zchunk header (lead, preface, index, signatures) at the file's start.
    public var headerSize: Int64
    /// Hex SHA-256 of the header's bytes; a header is checked against it before it is parsed.
    public var headerSHA256: String
    /// The chunk size in bytes the publisher aimed at (a power of two in `chunkSizes`). A device cuts
    /// its old files the same way to find the chunks it already has, so the cut (this and
    /// `minChunk`, `maxChunk`, `normalization`) must be the publisher's; nil (catalogs published
    /// before it was recorded) means `defaultChunkSize`.
    public var chunkSize: Int? {
        get { cut?.fields.chunkSize }
        set { setCut { $0.chunkSize = newValue } }
    }
    /// No chunk is shorter but a file's last (nil: a quarter of the chunk size).
    public var minChunk: Int? {
        get { cut?.fields.minChunk }
        set { setCut { $0.minChunk = newValue } }
    }
    /// No chunk is longer (nil: eight times the chunk size).
    public var maxChunk: Int? {
        get { cut?.fields.maxChunk }
        set { setCut { $0.maxChunk = newValue } }
    }
    /// How tightly chunk lengths gather around `chunkSize` (FastCDC's normalized chunking): below
    /// it a cut is `2^n` times less likely, above it `2^n` times more (nil: 0, one likelihood
    /// from `minChunk` on, as the first publishers cut).
    public var normalization: Int? {
        get { cut?.fields.normalization }
        set { setCut { $0.normalization = newValue } }
    }
    /// The zstd level of every chunk (in `levels`); the device compresses its old files' chunks at
    /// it to match them. nil means `defaultLevel`.
    public var level: Int? {
        get { cut?.fields.level }
        set { setCut { $0.level = newValue } }
    }

    /// Whether a SQLite database inside the bundle is cut every `chunkSize` bytes from the file's
    /// start (on its pages, which SQLite changes in place) rather than by content, so an edited
    /// page costs only its own chunks. nil (catalogs published before it) means false; a reader
    /// that does not know it cuts by content and finds fewer chunks, never wrong ones.
    public var sqlitePages: Bool? {
        get { cut?.fields.sqlitePages }
        set { setCut { $0.sqlitePages = newValue } }
    }

    /// The six fields above, out of line: every `BundleInfo` holds a `ChunkedBundle?` inline, so five
    /// inline `Int?` made every bundle of every catalog in memory 80 bytes bigger, chunked or not
    /// (a build's peak RSS grew by 2.5 MiB on the 0.025 GiB bench world). nil when none is set.
    private var cut: Cut?

    /// The recorded cut, boxed; immutable, replaced whole when a field is set.
    private final class Cut: Sendable, Equatable {
        let fields: CutFields

        init(_ fields: CutFields) { self.fields = fields }

        static func == (a: Cut, b: Cut) -> Bool { a.fields == b.fields }
    }

    /// The cut's fields.
    private struct CutFields: Sendable, Equatable {
        var chunkSize: Int?, minChunk: Int?, maxChunk: Int?, normalization: Int?, level: Int?
        var sqlitePages: Bool?
    }

    private mutating func setCut(_ change: (inout CutFields) -> Void) {
        var fields = cut?.fields ?? CutFields()
        change(&fields)
        cut = fields == CutFields() ? nil : Cut(fields)
    }

    /// The largest header a reader accepts (a bundle of millions of chunks stays far below it).
    public static let maxHeaderSize: Int64 = 64 << 20
    /// The chunk sizes a catalog may name: powers of two from 1 KiB to 1 MiB.
    public static let chunkSizes: ClosedRange<Int> = 1024...(1 << 20)
    /// The zstd levels a catalog may name: zstd's regular ones (no "ultra" levels, whose windows
    /// would make a device allocate hundreds of megabytes).
    public static let levels: ClosedRange<Int> = 1...19
    /// The chunk size of a catalog that names none (what every publisher used before it was recorded).
    public static let defaultChunkSize = 8 << 10
    /// The zstd level of a catalog that names none.
    public static let defaultLevel = 6

    /// The largest `maxChunk` a catalog may name.
    public static let maxChunkLimit = 16 << 20
    /// The normalization levels a catalog may name.
    public static let normalizations: ClosedRange<Int> = 0...3

    public init(
        url: String, size: Int64, headerSize: Int64, headerSHA256: String, chunkSize: Int? = nil, minChunk: Int? = nil,
        maxChunk: Int? = nil, normalization: Int? = nil, level: Int? = nil, sqlitePages: Bool? = nil
    ) {
        self.url = url
        self.size = size
        self.headerSize = headerSize
        self.headerSHA256 = headerSHA256
        setCut { fields in
            fields = CutFields(
                chunkSize: chunkSize, minChunk: minChunk, maxChunk: maxChunk, normalization: normalization, level: level,
                sqlitePages: sqlitePages)
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Field.self)
        try self.init(
            url: c.decode(String.self, forKey: .url), size: c.decode(Int64.self, forKey: .size),
            headerSize: c.decode(Int64.self, forKey: .headerSize), headerSHA256: c.decode(String.self, forKey: .headerSHA256),
            chunkSize: c.decodeIfPresent(Int.self, forKey: .chunkSize), minChunk: c.decodeIfPresent(Int.self, forKey: .minChunk),
            maxChunk: c.decodeIfPresent(Int.self, forKey: .maxChunk), normalization: c.decodeIfPresent(Int.self, forKey: .normalization),
            level: c.decodeIfPresent(Int.self, forKey: .level), sqlitePages: c.decodeIfPresent(Bool.self, forKey: .sqlitePages))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Field.self)
        try c.encode(url, forKey: .url)
        try c.encode(size, forKey: .size)
        try c.encode(headerSize, forKey: .headerSize)
        try c.encode(headerSHA256, forKey: .headerSHA256)
        try c.encodeIfPresent(chunkSize, forKey: .chunkSize)
        try c.encodeIfPresent(minChunk, forKey: .minChunk)
        try c.encodeIfPresent(maxChunk, forKey: .maxChunk)
        try c.encodeIfPresent(normalization, forKey: .normalization)
        try c.encodeIfPresent(level, forKey: .level)
        try c.encodeIfPresent(sqlitePages, forKey: .sqlitePages)
    }

    /// The chunk size to cut with: the catalog's, else `defaultChunkSize`.
    public var effectiveChunkSize: Int { chunkSize ?? Self.defaultChunkSize }
    /// The shortest chunk: the catalog's, else a quarter of `effectiveChunkSize`.
    public var effectiveMinChunk: Int { minChunk ?? effectiveChunkSize / 4 }
    /// The longest chunk: the catalog's, else eight times `effectiveChunkSize`.
    public var effectiveMaxChunk: Int { maxChunk ?? effectiveChunkSize * 8 }
    /// The normalization level: the catalog's, else 0.
    public var effectiveNormalization: Int { normalization ?? 0 }
    /// The zstd level to compress with: the catalog's, else `defaultLevel`.
    public var effectiveLevel: Int { level ?? Self.defaultLevel }
    /// Whether SQLite databases are cut on their pages: the catalog's, else false.
    public var effectiveSQLitePages: Bool { sqlitePages ?? false }

    /// Why a chunk size cannot be used (nil when it can).
    public static func chunkSizeProblem(_ value: Int) -> String? {
        chunkSizes.contains(value) && value.nonzeroBitCount == 1
            ? nil : "which is not a power of two from \(chunkSizes.lowerBound) to \(chunkSizes.upperBound) bytes"
    }

    /// Why a zstd level cannot be used (nil when it can).
    public static func levelProblem(_ value: Int) -> String? {
        levels.contains(value) ? nil : "which is not a zstd level from \(levels.lowerBound) to \(levels.upperBound)"
    }

    /// The first field whose value a device cannot use, with its value and why.
    public var parameterProblem: (field: String, value: Int, reason: String)? {
        if let chunkSize, let reason = Self.chunkSizeProblem(chunkSize) { return ("chunkSize", chunkSize, reason) }
        let size = effectiveChunkSize
        if let minChunk, !(64...size).contains(minChunk) {
            return ("minChunk", minChunk, "which is not from 64 bytes to the chunk size (\(size))")
        }
        if let maxChunk, !(size...Self.maxChunkLimit).contains(maxChunk) {
            return ("maxChunk", maxChunk, "which is not from the chunk size (\(size)) to \(Self.maxChunkLimit) bytes")
        }
        if let normalization, !Self.normalizations.contains(normalization) {
            return ("normalization", normalization, "which is not from \(Self.normalizations.lowerBound) to \(Self.normalizations.upperBound)")
        }
        if let level, let reason = Self.levelProblem(level) { return ("level", level, reason) }
        return nil
    }
}
