import Foundation

/// `catalog.json.timestamp`: a small signed document beside the catalog with the properties of TUF's
/// timestamp role. It names the current catalog (`version`, `epoch`, the SHA-256 and size of the plain
/// `catalog.json`, and of its compressed `catalog.json.zst`), has its own counter (`timestampVersion`,
/// which only grows, so a replayed older timestamp is refused) and a short `expires`, and is signed
/// with the catalog key. A device fetches it first and the catalog only when it names one it lacks.
public struct CatalogTimestamp: Codable, Equatable, Sendable {
    typealias CodingKeys = Field

    /// `mappack-catalog-timestamp/1`.
    public static let formatTag = FormatTag(name: "mappack-catalog-timestamp", major: 1)
    /// The timestamp's file name beside `catalog.json`.
    public static let fileName = "catalog.json.timestamp"
    /// Largest timestamp file accepted (a real one is about 600 bytes).
    public static let maxBytes = 16 << 10

    public var format: String
    /// The named catalog's `catalog` id (the lineage).
    public var catalog: String
    /// The named catalog's signed version.
    public var version: Int64
    /// The named catalog's epoch (absent: 0).
    public var epoch: Int64?
    /// The timestamp's own counter: it only grows, also when only the expiry is renewed.
    public var timestampVersion: Int64
    /// When the timestamp stops being valid, `YYYY-MM-DDTHH:MM:SSZ` (UTC); short (a day by default).
    public var expires: String
    /// SHA-256 of the exact `catalog.json` bytes.
    public var sha256: SHA256Digest
    /// Size of `catalog.json` in bytes; also the cap on decompressing `catalog.json.zst`.
    public var size: Int64
    /// Hex SHA-256 of `catalog.json.zst`, when the publisher wrote one.
    public var zstSHA256: String?
    /// Size of `catalog.json.zst` in bytes, when the publisher wrote one.
    public var zstSize: Int64?
    /// The first 16 hex digits of the SHA-256 of the signing public key's raw 32 bytes.
    public var keyID: String
    /// Base64 Ed25519 signature over `signedBytes`.
    public var signature: String

    /// A timestamp record (the `signature` filled in by the signer).
    public init(
        catalog: String, version: Int64, epoch: Int64?, timestampVersion: Int64, expires: String, sha256: SHA256Digest, size: Int64,
        zstSHA256: String?, zstSize: Int64?, keyID: String, signature: String = ""
    ) {
        self.format = Self.formatTag.description
        self.catalog = catalog
        self.version = version
        self.epoch = epoch
        self.timestampVersion = timestampVersion
        self.expires = expires
        self.sha256 = sha256
        self.size = size
        self.zstSHA256 = zstSHA256
        self.zstSize = zstSize
        self.keyID = keyID
        self.signature = signature
    }

    /// The bytes the signature covers: canonical JSON of every field but `signature`.
    public var signedBytes: Data {
        get throws {
            var unsigned = self
            unsigned.signature = ""
            return try CanonicalJSON.encode(Signed(record: unsigned))
        }
    }

    /// The epoch, 0 when absent.
    public var lineageEpoch: Int64 { epoch ?? 0 }

    /// `expires` as a date; nil when it is not exactly a `UTCTime`.
    public var expiryDate: Date? { UTCTime.parse(expires) }

    /// Where the timestamp of the catalog at `catalog` is: `.timestamp` appended to the URL's path.
    public static func url(beside catalog: URL) -> URL { CatalogSignature.url(beside: catalog, suffix: ".timestamp") }

    /// Where the compressed catalog is: `.zst` appended to the URL's path.
    public static func compressedURL(beside catalog: URL) -> URL { CatalogSignature.url(beside: catalog, suffix: ".zst") }

    /// Parses a timestamp file; `source` names it in errors.
    public static func parse(_ data: Data, source: String) throws(CatalogTrustError) -> CatalogTimestamp {
        guard data.count <= maxBytes else { throw .signatureInvalid(reason: "\(source) is larger than \(maxBytes) bytes") }
        let parsed: CatalogTimestamp
        do { parsed = try CanonicalJSON.decode(CatalogTimestamp.self, from: data, file: source, integersOnly: true) } catch {
            throw .signatureInvalid(reason: "\(error)")
        }
        do { try FormatTagError.check(parsed.format, expected: formatTag) } catch { throw .signatureInvalid(reason: "\(source): \(error)") }
        let bound = CatalogSignature.maxVersion
        for (name, value) in [("version", parsed.version), ("epoch", parsed.lineageEpoch), ("timestampVersion", parsed.timestampVersion)]
        where !(0...bound).contains(value) {
            throw .signatureInvalid(reason: "\(source): \(name) \(value) is outside 0...\(bound)")
        }
        guard parsed.size >= 0, (parsed.zstSize ?? 0) >= 0, (parsed.zstSize == nil) == (parsed.zstSHA256 == nil) else {
            throw .signatureInvalid(reason: "\(source): size or zstSize is negative, or zstSize and zstSHA256 are not given together")
        }
        guard parsed.expiryDate != nil else {
            throw .signatureInvalid(
                reason: "\(source): expires '\(parsed.expires)' is not a UTC time like 2027-01-15T08:00:00Z; publish a fresh timestamp")
        }
        guard parsed.zstSHA256.map({ Hex.isDigits($0.utf8, count: 64) }) ?? true else {
            throw .signatureInvalid(reason: "\(source): zstSHA256 is not 64 lowercase hex digits")
        }
        return parsed
    }

    /// The signed fields: every `Field` but `signature`, absent optionals left out.
    private struct Signed: Encodable {
        let record: CatalogTimestamp

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Field.self)
            try container.encode(record.catalog, forKey: .catalog)
            try container.encodeIfPresent(record.epoch, forKey: .epoch)
            try container.encode(record.expires, forKey: .expires)
            try container.encode(record.format, forKey: .format)
            try container.encode(record.keyID, forKey: .keyID)
            try container.encode(record.sha256, forKey: .sha256)
            try container.encode(record.size, forKey: .size)
            try container.encode(record.timestampVersion, forKey: .timestampVersion)
            try container.encode(record.version, forKey: .version)
            try container.encodeIfPresent(record.zstSHA256, forKey: .zstSHA256)
            try container.encodeIfPresent(record.zstSize, forKey: .zstSize)
        }
    }
}
