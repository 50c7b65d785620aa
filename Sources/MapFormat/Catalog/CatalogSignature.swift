import Foundation

/// `catalog.json.sig`: a detached Ed25519 signature over a catalog, in the manner of TUF's
/// timestamp/targets metadata. The signed fields say which catalog bytes (`sha256`), which catalog
/// (`catalog`), how new (`version`, only ever grows), until when (`expires`), who signed (`keyID`)
/// and, for key rotation, which key signs next (`nextKey`); `signature` is Ed25519 over `signedBytes`.
public struct CatalogSignature: Codable, Equatable, Sendable {
    typealias CodingKeys = Field

    /// `mappack-catalog-sig/1`.
    public static let formatTag = FormatTag(name: "mappack-catalog-sig", major: 1)
    /// The signature file's name beside `catalog.json`.
    public static let fileName = "catalog.json.sig"
    /// Largest signature file accepted (a real one is well under 1 KiB).
    public static let maxBytes = 64 << 10
    /// Largest version accepted: 2^53 - 1, the largest integer every JSON reader holds exactly.
    public static let maxVersion: Int64 = (1 << 53) - 1

    public var format: String
    /// The signed catalog's `catalog` id.
    public var catalog: String
    /// The catalog version; a device refuses one lower than the newest it has seen within the same epoch.
    public var version: Int64
    /// The lineage's counter reset (absent: 0). A higher epoch starts the version count afresh, and is
    /// accepted only with a `cosignature` by the `nextKey` it names: a rotation signed by the old and the
    /// new key, the key holder's way out of a version frozen too high.
    public var epoch: Int64?
    /// When the signature stops being valid, `YYYY-MM-DDTHH:MM:SSZ` (UTC).
    public var expires: String
    /// SHA-256 of the exact `catalog.json` bytes.
    public var sha256: SHA256Digest
    /// The key that signs the next catalogs (`mappack-ed25519-public:…`), when the publisher rotates keys.
    public var nextKey: String?
    /// The first 16 hex digits of the SHA-256 of the signing public key's raw 32 bytes.
    public var keyID: String
    /// Base64 Ed25519 signature over `signedBytes`.
    public var signature: String
    /// With a new `epoch`: the `nextKey`'s signature over the same `signedBytes`.
    public var cosignature: Cosignature?

    /// A second signature over `signedBytes`, by the key named `keyID`.
    public struct Cosignature: Codable, Equatable, Sendable {
        /// The first 16 hex digits of the SHA-256 of the cosigning public key's raw 32 bytes.
        public var keyID: String
        /// Base64 Ed25519 signature over the record's `signedBytes`.
        public var signature: String

        /// A cosignature record.
        public init(keyID: String, signature: String) {
            self.keyID = keyID
            self.signature = signature
        }
    }

    /// Builds a signature record (the `signature` field filled in by the signer).
    public init(
        catalog: String, version: Int64, epoch: Int64? = nil, expires: String, sha256: SHA256Digest, nextKey: String?, keyID: String,
        signature: String = ""
    ) {
        self.format = Self.formatTag.description
        self.catalog = catalog
        self.version = version
        self.epoch = epoch
        self.expires = expires
        self.sha256 = sha256
        self.nextKey = nextKey
        self.keyID = keyID
        self.signature = signature
    }

    /// The bytes the signature covers: canonical JSON of every field but `signature` and `cosignature`
    /// (`nextKey` as null when absent; `epoch` only when present, so records without one read as before).
    public var signedBytes: Data {
        get throws {
            try CanonicalJSON.encode(
                Signed(
                    catalog: catalog, epoch: epoch, expires: expires, format: format, keyID: keyID, nextKey: nextKey, sha256: sha256,
                    version: version))
        }
    }

    /// The epoch, 0 when absent.
    public var lineageEpoch: Int64 { epoch ?? 0 }

    /// `expires` as a date; nil when it is not exactly a `UTCTime` (`2027-01-15T08:00:00Z`, year at most 9999).
    public var expiryDate: Date? { UTCTime.parse(expires) }

    /// Where the signature of the catalog at `catalog` is: `.sig` appended to the URL's path (query kept).
    public static func url(beside catalog: URL) -> URL { url(beside: catalog, suffix: ".sig") }

    /// `suffix` appended to the catalog URL's path (query kept): the signature, timestamp and `.zst` beside it.
    static func url(beside catalog: URL, suffix: String) -> URL {
        if catalog.isFileURL { return URL(fileURLWithPath: catalog.path + suffix) }
        let fallback = catalog.appendingPathExtension(String(suffix.dropFirst()))
        guard var components = URLComponents(url: catalog, resolvingAgainstBaseURL: true) else { return fallback }
        components.percentEncodedPath += suffix
        return components.url ?? fallback
    }

    /// `date` as an `expires` value; past `UTCTime.latest` it is that (publish refuses such an expiry first).
    public static func timestamp(_ date: Date) -> String {
        UTCTime.format(min(max(date, Date(timeIntervalSince1970: 0)), UTCTime.latest))!
    }

    /// Parses a signature file; `source` names it in errors.
    public static func parse(_ data: Data, source: String) throws(CatalogTrustError) -> CatalogSignature {
        guard data.count <= maxBytes else { throw .signatureInvalid(reason: "\(source) is larger than \(maxBytes) bytes") }
        let parsed: CatalogSignature
        do { parsed = try CanonicalJSON.decode(CatalogSignature.self, from: data, file: source, integersOnly: true) } catch {
            throw .signatureInvalid(reason: "\(error)")
        }
        do { try FormatTagError.check(parsed.format, expected: formatTag) } catch { throw .signatureInvalid(reason: "\(source): \(error)") }
        guard parsed.version >= 0 else { throw .signatureInvalid(reason: "\(source): version \(parsed.version) is negative") }
        guard parsed.version <= maxVersion else {
            throw .signatureInvalid(reason: "\(source): version \(parsed.version) is above the largest accepted, \(maxVersion)")
        }
        guard (0...maxVersion).contains(parsed.lineageEpoch) else {
            throw .signatureInvalid(reason: "\(source): epoch \(parsed.lineageEpoch) is outside 0...\(maxVersion)")
        }
        guard parsed.expiryDate != nil else {
            throw .signatureInvalid(
                reason: "\(source): expires '\(parsed.expires)' is not a UTC time like 2027-01-15T08:00:00Z "
                    + "(exactly that form, year at most 9999); publish a fresh signature")
        }
        return parsed
    }

    /// The signed fields (every `Field` but `signature`); `nextKey` is always present so its absence is signed too.
    private struct Signed: Encodable {
        let catalog: String, epoch: Int64?, expires: String, format: String, keyID: String, nextKey: String?, sha256: SHA256Digest, version: Int64

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Field.self)
            try container.encode(catalog, forKey: .catalog)
            try container.encodeIfPresent(epoch, forKey: .epoch)
            try container.encode(expires, forKey: .expires)
            try container.encode(format, forKey: .format)
            try container.encode(keyID, forKey: .keyID)
            try container.encode(nextKey, forKey: .nextKey)
            try container.encode(sha256, forKey: .sha256)
            try container.encode(version, forKey: .version)
        }
    }
}
