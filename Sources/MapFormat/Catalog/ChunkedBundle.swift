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

    /// The largest header a reader accepts (a bundle of millions of chunks stays far below it).
    public static let maxHeaderSize: Int64 = 64 << 20

    public init(url: String, size: Int64, headerSize: Int64, headerSHA256: String) {
        self.url = url
        self.size = size
        self.headerSize = headerSize
        self.headerSHA256 = headerSHA256
    }
}
