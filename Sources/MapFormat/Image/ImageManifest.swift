import Foundation

/// What a preinstall image holds and how to check it (`manifest.json`, format `mappack-image/1`).
public struct ImageManifest: Encodable, Sendable, Equatable {
    typealias CodingKeys = Field
    /// The format this reader understands.
    public static let formatTag = FormatTag(name: "mappack-image", major: 1)
    /// The manifest's file name inside an image.
    public static let fileName = "manifest.json"
    /// The store folder's name inside an image.
    public static let storeFolder = "store"
    /// The detached Ed25519 signature of `manifest.json`'s bytes (base64, one line).
    public static let signatureFileName = "manifest.sig"
    /// The cache seed's file name inside an image.
    public static let cacheSeedFileName = "cache-seed.sqlite"
    /// The manifest's signature in minisign's format, for stock `minisign -V`; in the folder form only.
    public static let minisignFileName = "manifest.json.minisig"

    /// `mappack-image/<major>`.
    public var format: String
    /// The image id: SHA-256 (hex) of the canonical manifest with this field empty.
    public var imageID: String
    /// The recipe's name.
    public var name: String
    /// The catalog id.
    public var catalog: String
    /// The map version of every file in the image.
    public var mapVersion: MapVersion
    /// Build time (ISO 8601) from `SOURCE_DATE_EPOCH` or the catalog's release time.
    public var built: String
    /// The mappack version that wrote the image.
    public var mappackVersion: String
    /// Filesystem block size `sizeOnDiskInBytes` was computed for.
    public var blockSize: Int64
    /// Language of `ImageRegion.name`.
    public var language: String?
    /// The regions in the store.
    public var regions: [ImageRegion]
    /// The bundles whose files make up the store.
    public var bundles: [ImageBundle]
    /// Every regular file in the store, sorted by path.
    public var files: [ImageFile]
    /// The cache seed, when the image carries one.
    public var cacheSeed: ImageCacheSeed?

    /// Builds a manifest; `imageID` is filled by `sealed()`.
    public init(
        name: String, catalog: String, mapVersion: MapVersion, built: String, mappackVersion: String, blockSize: Int64,
        language: String?, regions: [ImageRegion], bundles: [ImageBundle], files: [ImageFile], cacheSeed: ImageCacheSeed?
    ) {
        self.format = ImageManifest.formatTag.description
        self.imageID = ""
        self.name = name
        self.catalog = catalog
        self.mapVersion = mapVersion
        self.built = built
        self.mappackVersion = mappackVersion
        self.blockSize = blockSize
        self.language = language
        self.regions = regions
        self.bundles = bundles
        self.files = files
        self.cacheSeed = cacheSeed
    }

    /// The bytes the image id hashes and a signature signs: canonical JSON with `imageID` empty.
    public func bytesForID() throws -> Data {
        var copy = self
        copy.imageID = ""
        return try CanonicalJSON.encode(copy)
    }

    /// The canonical bytes written to `manifest.json`.
    public func canonicalBytes() throws -> Data { try CanonicalJSON.encode(self) }

    /// `"imageID":"<id>"` as it appears in canonical bytes.
    public static func idField(_ id: String) -> Data { Field.idField(id) }

    /// The canonical bytes with `imageID` set, from one encoding: encode with the id empty,
    /// hash those bytes with `hash`, splice the id in. Returns (id, bytes).
    public func sealed(hash: (Data) -> String) throws -> (imageID: String, bytes: Data) {
        var bytes = try canonicalBytesWithoutID()
        let id = hash(bytes)
        // In place: the buffer is uniquely referenced, so at most one reallocation.
        if let range = bytes.range(of: ImageManifest.idField("")) { bytes.replaceSubrange(range, with: ImageManifest.idField(id)) }
        return (id, bytes)
    }

    /// `bytesForID()`, but with the file list (nearly all of a large manifest) written directly
    /// rather than through JSONEncoder, whose intermediate tree for 10⁵ files costs tens of MiB.
    /// The bytes are the same as JSONEncoder's (sorted keys, `/` unescaped, UTF-8 as is); a path
    /// that JSON would escape sends the whole manifest through JSONEncoder instead.
    func canonicalBytesWithoutID() throws -> Data {
        if files.contains(where: { ImageManifest.pathNeedsEscaping($0.path.string) }) { return try bytesForID() }
        guard let shell = try shellAroundFiles() else { return try bytesForID() }
        // One buffer, filled in order: what precedes the list, the list, what follows it.
        var list = Data()
        list.reserveCapacity(shell.before.count + shell.after.count + files.count * 190)
        list.append(shell.before)
        for (index, file) in files.enumerated() {
            ImageManifest.appendFileEntry(
                path: file.path.string, size: file.size, sha256: file.sha256, bundle: file.bundle, first: index == 0, to: &list)
        }
        list.append(shell.after)
        return list
    }

    /// The canonical bytes of this manifest with `imageID` empty and no files, split where the
    /// file entries go: `before` ends with `"files":[`, `after` starts with `]`. Writing `before`,
    /// the entries (`appendFileEntry`) and `after` gives `bytesForID()` of the manifest with those
    /// files, so a large file list can be streamed. Nil if the split point is not found.
    public func shellAroundFiles() throws -> (before: Data, after: Data)? {
        var shell = self
        shell.imageID = ""
        shell.files = []
        let bytes = try CanonicalJSON.encode(shell)
        guard let range = bytes.range(of: Field.files.emptyList) else { return nil }
        return (bytes[..<range.lowerBound] + Field.files.listStart, Data("]".utf8) + bytes[range.upperBound...])
    }

    /// True when JSON would escape something in `path` (control characters, `"` or `\`).
    public static func pathNeedsEscaping(_ path: String) -> Bool {
        path.utf8.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }
    }

    /// Appends one file entry as JSONEncoder writes it (keys sorted), preceded by a comma unless
    /// `first`. The path must not need escaping (`pathNeedsEscaping`).
    public static func appendFileEntry(path: String, size: Int64, sha256: SHA256Digest, bundle: BundleDigest, first: Bool, to out: inout Data) {
        appendFileEntry(path: path, size: size, sha256: sha256, bundleText: bundle.description, first: first, to: &out)
    }

    /// `appendFileEntry` with the bundle's `sha256:…` text made once for many entries, into any byte buffer.
    @inlinable
    public static func appendFileEntry<Bytes: RangeReplaceableCollection>(
        path: String, size: Int64, sha256: SHA256Digest, bundleText: String,
        first: Bool, to out: inout Bytes
    ) where Bytes.Element == UInt8 {
        if !first { out.append(UInt8(ascii: ",")) }
        out.append(contentsOf: ImageFile.Field.entryOpening)
        out.append(contentsOf: bundleText.utf8)
        out.append(contentsOf: ImageFile.Field.afterBundle)
        out.append(contentsOf: path.utf8)
        out.append(contentsOf: ImageFile.Field.afterPath)
        sha256.appendHex(to: &out)
        out.append(contentsOf: ImageFile.Field.afterSHA256)
        out.append(contentsOf: String(size).utf8)
        out.append(UInt8(ascii: "}"))
    }

    /// The bytes the id was computed from, recovered from `manifest.json`'s own bytes by
    /// blanking the id (no re-encoding); nil when the file does not hold the id field as written.
    public static func bytesForID(fromFile data: Data, imageID: String) -> Data? {
        guard let range = data.range(of: idField(imageID)) else { return nil }
        var bytes = data
        bytes.replaceSubrange(range, with: idField(""))
        return bytes
    }

    /// Looks the region up by id.
    public func region(_ id: RegionID) -> ImageRegion? { regions.first { $0.id == id } }
}

/// One region of an image.
public struct ImageRegion: Encodable, Sendable, Equatable {
    typealias CodingKeys = Field

    /// Catalog id.
    public var id: RegionID
    /// Parent id (nil at a root of the image's catalog).
    public var parent: RegionID?
    /// The name in the manifest's language.
    public var name: String
    /// All localized names.
    public var names: [String: String]
    /// The region's own bundles.
    public var bundles: [BundleDigest]
    /// Allocated bytes of the region's and its descendants' files in the image, shared bundles once.
    public var sizeOnDiskInBytes: Int64
    /// Centre, bounding box, cities and release time as the catalog gives them.
    public var center: [Double]?
    public var bbox: [Double]?
    public var cities: [String]?
    public var released: String?

    /// Builds a region record.
    public init(
        id: RegionID, parent: RegionID?, name: String, names: [String: String], bundles: [BundleDigest], sizeOnDiskInBytes: Int64,
        center: [Double]? = nil, bbox: [Double]? = nil, cities: [String]? = nil, released: String? = nil
    ) {
        self.id = id
        self.parent = parent
        self.name = name
        self.names = names
        self.bundles = bundles
        self.sizeOnDiskInBytes = sizeOnDiskInBytes
        self.center = center
        self.bbox = bbox
        self.cities = cities
        self.released = released
    }
}

/// One bundle of an image.
public struct ImageBundle: Encodable, Sendable, Equatable {
    typealias CodingKeys = Field

    /// Content address of the compressed bundle.
    public var digest: BundleDigest
    /// Compressed size (what a device downloads for it).
    public var size: Int64
    /// Where the catalog keeps it, relative to the catalog URL.
    public var url: String
    /// Regular files it unpacks to.
    public var files: Int
    /// Bytes those files hold.
    public var unpackedSize: Int64

    /// Builds a bundle record.
    public init(digest: BundleDigest, size: Int64, url: String, files: Int, unpackedSize: Int64) {
        self.digest = digest
        self.size = size
        self.url = url
        self.files = files
        self.unpackedSize = unpackedSize
    }
}

/// One regular file of the store.
public struct ImageFile: Encodable, Sendable, Equatable {
    typealias CodingKeys = Field

    /// Path relative to the store root, `/`-separated; checked where the manifest was read.
    public var path: StorePath
    /// Bytes.
    public var size: Int64
    /// SHA-256 of the content.
    public var sha256: SHA256Digest
    /// The bundle the file came from.
    public var bundle: BundleDigest

    /// Builds a file record.
    public init(path: StorePath, size: Int64, sha256: SHA256Digest, bundle: BundleDigest) {
        self.path = path
        self.size = size
        self.sha256 = sha256
        self.bundle = bundle
    }
}

/// The cache seed's identity.
public struct ImageCacheSeed: Encodable, Sendable, Equatable {
    typealias CodingKeys = Field

    /// SHA-256 of `cache-seed.sqlite`.
    public var sha256: SHA256Digest
    /// Its size in bytes.
    public var size: Int64
    /// Number of cache entries.
    public var entries: Int
    /// Regions whose data it holds.
    public var regions: [RegionID]

    /// Builds a cache seed record.
    public init(sha256: SHA256Digest, size: Int64, entries: Int, regions: [RegionID]) {
        self.sha256 = sha256
        self.size = size
        self.entries = entries
        self.regions = regions
    }
}
