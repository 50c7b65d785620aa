import Foundation

/// A provider's published map data of one map version: the region tree and its bundles
/// (`catalog.json`, format `mappack-catalog/1`).
public struct Catalog: Codable, Sendable, Equatable {
    /// The format this reader understands.
    public static let formatTag = FormatTag(name: "mappack-catalog", major: 1)

    /// `mappack-catalog/<major>`.
    public var format: String
    /// The catalog's id, e.g. `demo-world`.
    public var catalog: String
    /// The map version every bundle of this catalog belongs to.
    public var mapVersion: MapVersion
    /// Release time (ISO 8601), when given.
    public var released: String?
    /// Last day this version is supported (ISO 8601), when the provider declares one.
    public var supportedUntil: String?
    /// All regions, roots first is not required.
    public var regions: [CatalogRegion]
    /// Every bundle by its digest.
    public var bundles: [BundleDigest: BundleInfo]

    /// Builds a catalog in memory (the publisher and tests do).
    public init(catalog: String, mapVersion: MapVersion, released: String?, regions: [CatalogRegion], bundles: [BundleDigest: BundleInfo]) {
        self.format = Catalog.formatTag.description
        self.catalog = catalog
        self.mapVersion = mapVersion
        self.released = released
        self.regions = regions
        self.bundles = bundles
    }

    typealias CodingKeys = Field

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        format = try c.decode(String.self, forKey: .format)
        catalog = try c.decode(String.self, forKey: .catalog)
        mapVersion = try c.decode(MapVersion.self, forKey: .mapVersion)
        released = try c.decodeIfPresent(String.self, forKey: .released)
        supportedUntil = try c.decodeIfPresent(String.self, forKey: .supportedUntil)
        regions = try c.decode([CatalogRegion].self, forKey: .regions)
        let raw = try c.decode([String: BundleInfo].self, forKey: .bundles)
        var bundles: [BundleDigest: BundleInfo] = [:]
        for (key, info) in raw {
            guard let digest = BundleDigest(key) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .bundles, in: c, debugDescription: "bundle key '\(key)' is not a digest (sha256:<64 hex>)")
            }
            bundles[digest] = info
        }
        self.bundles = bundles
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(format, forKey: .format)
        try c.encode(catalog, forKey: .catalog)
        try c.encode(mapVersion, forKey: .mapVersion)
        try c.encodeIfPresent(released, forKey: .released)
        try c.encodeIfPresent(supportedUntil, forKey: .supportedUntil)
        try c.encode(regions, forKey: .regions)
        try c.encode(Dictionary(uniqueKeysWithValues: bundles.map { ($0.key.description, $0.value) }), forKey: .bundles)
    }
}

/// One region of a catalog.
public struct CatalogRegion: Codable, Sendable, Equatable {
    /// Unique id, e.g. `europe/ch`.
    public var id: RegionID
    /// The parent region; nil at a root.
    public var parent: RegionID?
    /// Localized names by language tag; at least one.
    public var names: [String: String]
    /// Latitude, longitude of the region's centre.
    public var center: [Double]?
    /// West, south, east, north.
    public var bbox: [Double]?
    /// The region's own bundles (descendants bring theirs).
    public var bundles: [BundleDigest]
    /// Cities and places the provider lists for the region.
    public var cities: [String]?
    /// When this region's data was released (ISO 8601).
    public var released: String?

    /// Builds a region in memory.
    public init(
        id: RegionID, parent: RegionID?, names: [String: String], bundles: [BundleDigest],
        center: [Double]? = nil, bbox: [Double]? = nil, cities: [String]? = nil, released: String? = nil
    ) {
        self.id = id
        self.parent = parent
        self.names = names
        self.bundles = bundles
        self.center = center
        self.bbox = bbox
        self.cities = cities
        self.released = released
    }

    typealias CodingKeys = Field

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(RegionID.self, forKey: .id)
        // `parent` is required but may be null at the roots.
        guard c.contains(.parent) else {
            throw DecodingError.keyNotFound(
                CodingKeys.parent, .init(codingPath: c.codingPath, debugDescription: "region '\(id)' has no \"parent\" (use null at a root)"))
        }
        parent = try c.decodeIfPresent(RegionID.self, forKey: .parent)
        names = try c.decode([String: String].self, forKey: .names)
        center = try c.decodeIfPresent([Double].self, forKey: .center)
        bbox = try c.decodeIfPresent([Double].self, forKey: .bbox)
        bundles = try c.decode([BundleDigest].self, forKey: .bundles)
        cities = try c.decodeIfPresent([String].self, forKey: .cities)
        released = try c.decodeIfPresent(String.self, forKey: .released)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        if let parent { try c.encode(parent, forKey: .parent) } else { try c.encodeNil(forKey: .parent) }
        try c.encode(names, forKey: .names)
        try c.encodeIfPresent(center, forKey: .center)
        try c.encodeIfPresent(bbox, forKey: .bbox)
        try c.encode(bundles, forKey: .bundles)
        try c.encodeIfPresent(cities, forKey: .cities)
        try c.encodeIfPresent(released, forKey: .released)
    }
}

/// Where a bundle lives and how big it is, as the catalog declares.
public struct BundleInfo: Codable, Sendable, Equatable {
    typealias CodingKeys = Field

    /// Location relative to the catalog's URL.
    public var url: String
    /// Compressed bytes.
    public var size: Int64
    /// Sum of the unpacked regular files' sizes.
    public var unpackedSize: Int64
    /// Number of regular files, when declared.
    public var files: Int?
    /// What the bundle holds (`tiles`, `routing`, `search`, `overview`), when declared.
    public var kind: String?
    /// Bytes the unpacked files allocate, by filesystem block size (`"4096": 1234`), for the
    /// block sizes the publisher computed; lets a plan give exact sizes on disk before a byte
    /// is downloaded.
    public var sizeOnDisk: SizeOnDiskTable?
    /// The bundle's zchunk form, when the publisher wrote one (`publish --chunked`).
    public var chunked: ChunkedBundle?

    /// Builds bundle info in memory.
    public init(url: String, size: Int64, unpackedSize: Int64, files: Int?, kind: String?, sizeOnDisk: [String: Int64]? = nil) {
        self.init(
            url: url, size: size, unpackedSize: unpackedSize, files: files, kind: kind,
            sizeOnDiskTable: sizeOnDisk.map(SizeOnDiskTable.init(strings:)))
    }

    /// Builds bundle info in memory with a ready table.
    public init(url: String, size: Int64, unpackedSize: Int64, files: Int?, kind: String?, sizeOnDiskTable: SizeOnDiskTable?) {
        self.url = url
        self.size = size
        self.unpackedSize = unpackedSize
        self.files = files
        self.kind = kind
        self.sizeOnDisk = sizeOnDiskTable
    }

    /// The block sizes a publisher precomputes `sizeOnDisk` for.
    public static let publishedBlockSizes: [Int64] = [512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]

    /// Allocated bytes for `blockSize`, when the catalog declares them.
    public func sizeOnDisk(blockSize: Int64) -> Int64? { sizeOnDisk?[blockSize] }
}
