import Foundation

/// Decodes `catalog.json` in one pass over its bytes, with the same result and the same
/// required fields as `Catalog`'s `Decodable` conformance, several times faster: a full-world
/// catalog is ~9 MB, and Foundation's `JSONDecoder` made it most of `mappack plan`'s time.
public enum CatalogReader {
    /// The catalog in `data`; `file` names it in errors. Throws `JSONFileError` with a line and
    /// column, and the path to the offending value (`regions[3].parent`).
    public static func read(_ data: Data, file: String) throws -> Catalog {
        try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws -> Catalog in
            var scanner = JSONScanner(raw)
            do throws(Failure) {
                return try readCatalog(&scanner)
            } catch {
                throw fileError(error, in: scanner, file: file)
            }
        }
    }

    private typealias Failure = JSONScanner.Failure

    // MARK: Fields

    private enum CatalogField: Int {
        case format, catalog, mapVersion, released, supportedUntil, regions, bundles
        static let keys: [StaticString] = ["format", "catalog", "mapVersion", "released", "supportedUntil", "regions", "bundles"]
    }

    private enum RegionField: Int {
        case id, parent, names, center, bbox, bundles, cities, released
        static let keys: [StaticString] = ["id", "parent", "names", "center", "bbox", "bundles", "cities", "released"]
    }

    private enum BundleField: Int {
        case url, size, unpackedSize, files, kind, sizeOnDisk
        static let keys: [StaticString] = ["url", "size", "unpackedSize", "files", "kind", "sizeOnDisk"]
    }

    // MARK: Objects

    private static func readCatalog(_ scanner: inout JSONScanner) throws(Failure) -> Catalog {
        let start = scanner.offset
        guard try scanner.peekKind() == .object else { throw scanner.mismatch(expected: "an object (a catalog)") }
        var format: String?, name: String?, mapVersion: MapVersion?, released: String?, supportedUntil: String?
        var regions: [CatalogRegion]?, bundles: [BundleDigest: BundleInfo]?
        try scanner.beginObject()
        var first = true
        while try scanner.nextMember(first: &first) {
            switch try scanner.readKey(among: CatalogField.keys).flatMap(CatalogField.init(rawValue:)) {
            case .format?: format = try at("format") { () throws(Failure) in try scanner.readString() }
            case .catalog?: name = try at("catalog") { () throws(Failure) in try scanner.readString() }
            case .mapVersion?: mapVersion = try at("mapVersion") { () throws(Failure) in MapVersion(try scanner.readString()) }
            case .released?: released = try at("released") { () throws(Failure) in try optional(&scanner, readStringValue) }
            case .supportedUntil?: supportedUntil = try at("supportedUntil") { () throws(Failure) in try optional(&scanner, readStringValue) }
            case .regions?: regions = try at("regions") { () throws(Failure) in try readRegions(&scanner) }
            case .bundles?: bundles = try at("bundles") { () throws(Failure) in try readBundles(&scanner) }
            case nil: try scanner.skipValue()
            }
        }
        // Syntax errors anywhere come before missing fields, as with JSONDecoder.
        try scanner.expectEnd()
        var catalog = Catalog(catalog: try required(name, "catalog", at: start), mapVersion: try required(mapVersion, "mapVersion", at: start),
                              released: released, regions: try required(regions, "regions", at: start),
                              bundles: try required(bundles, "bundles", at: start))
        catalog.format = try required(format, "format", at: start)
        catalog.supportedUntil = supportedUntil
        return catalog
    }

    private static func readRegions(_ scanner: inout JSONScanner) throws(Failure) -> [CatalogRegion] {
        guard try scanner.peekKind() == .array else { throw scanner.mismatch(expected: "an array of regions") }
        var regions: [CatalogRegion] = []
        try scanner.beginArray()
        var first = true
        while try scanner.nextElement(first: &first) {
            let region = try at(regions.count) { () throws(Failure) in try readRegion(&scanner) }
            regions.append(region)
        }
        return regions
    }

    private static func readRegion(_ scanner: inout JSONScanner) throws(Failure) -> CatalogRegion {
        let start = scanner.offset
        guard try scanner.peekKind() == .object else { throw scanner.mismatch(expected: "an object (a region)") }
        var id: RegionID?, parent: RegionID?, parentPresent = false, names: [String: String]?
        var center: [Double]?, bbox: [Double]?, bundles: [BundleDigest]?, cities: [String]?, released: String?
        try scanner.beginObject()
        var first = true
        while try scanner.nextMember(first: &first) {
            switch try scanner.readKey(among: RegionField.keys).flatMap(RegionField.init(rawValue:)) {
            case .id?: id = try at("id") { () throws(Failure) in RegionID(try scanner.readString()) }
            case .parent?:
                parentPresent = true
                parent = try at("parent") { () throws(Failure) in try optional(&scanner, readRegionID) }
            case .names?: names = try at("names") { () throws(Failure) in try readStringDictionary(&scanner) }
            case .center?: center = try at("center") { () throws(Failure) in try optional(&scanner, readDoubles) }
            case .bbox?: bbox = try at("bbox") { () throws(Failure) in try optional(&scanner, readDoubles) }
            case .bundles?: bundles = try at("bundles") { () throws(Failure) in try readDigests(&scanner) }
            case .cities?: cities = try at("cities") { () throws(Failure) in try optional(&scanner, readStrings) }
            case .released?: released = try at("released") { () throws(Failure) in try optional(&scanner, readStringValue) }
            case nil: try scanner.skipValue()
            }
        }
        let regionID = try required(id, "id", at: start)
        guard parentPresent else {
            throw Failure(offset: start, reason: "missing required field \"parent\" (region '\(regionID)'; use null at a root)", path: [.key("parent")])
        }
        return CatalogRegion(id: regionID, parent: parent, names: try required(names, "names", at: start),
                             bundles: try required(bundles, "bundles", at: start),
                             center: center, bbox: bbox, cities: cities, released: released)
    }

    private static func readBundles(_ scanner: inout JSONScanner) throws(Failure) -> [BundleDigest: BundleInfo] {
        guard try scanner.peekKind() == .object else { throw scanner.mismatch(expected: "an object of bundles by digest") }
        var bundles: [BundleDigest: BundleInfo] = [:]
        // A bundle takes ≥ 300 bytes of JSON (digest key, url, sizes); sizing the table from the
        // bytes left saves rehashing tens of thousands of entries as it grows.
        bundles.reserveCapacity(min(scanner.remainingBytes / 300, 1 << 20))
        try scanner.beginObject()
        var first = true
        while try scanner.nextMember(first: &first) {
            let keyStart = scanner.offset
            // The same rule as `BundleDigest(_:)`, checked on the bytes without its copies.
            switch try scanner.readKeyPrefixedHex(prefix: "sha256:", digits: 64) {
            case .hex(let hex):
                let digest = BundleDigest(hex: hex)
                bundles[digest] = try at(digest.description) { () throws(Failure) in try readBundle(&scanner) }
            case .other(let key):
                throw Failure(offset: keyStart, reason: "bundle key '\(key)' is not a digest (sha256:<64 lower-case hex digits>)")
            }
        }
        return bundles
    }

    private static func readBundle(_ scanner: inout JSONScanner) throws(Failure) -> BundleInfo {
        let start = scanner.offset
        guard try scanner.peekKind() == .object else { throw scanner.mismatch(expected: "an object (a bundle)") }
        var url: String?, size: Int64?, unpackedSize: Int64?, files: Int?, kind: String?, sizeOnDisk: SizeOnDiskTable?
        try scanner.beginObject()
        var first = true
        while try scanner.nextMember(first: &first) {
            switch try scanner.readKey(among: BundleField.keys).flatMap(BundleField.init(rawValue:)) {
            case .url?: url = try at("url") { () throws(Failure) in try scanner.readString() }
            case .size?: size = try at("size") { () throws(Failure) in try scanner.readInt64() }
            case .unpackedSize?: unpackedSize = try at("unpackedSize") { () throws(Failure) in try scanner.readInt64() }
            case .files?: files = try at("files") { () throws(Failure) in try optional(&scanner, readInt) }
            case .kind?: kind = try at("kind") { () throws(Failure) in try optional(&scanner, readStringValue) }
            case .sizeOnDisk?: sizeOnDisk = try at("sizeOnDisk") { () throws(Failure) in try optional(&scanner, readSizeOnDiskTable) }
            case nil: try scanner.skipValue()
            }
        }
        return BundleInfo(url: try required(url, "url", at: start), size: try required(size, "size", at: start),
                          unpackedSize: try required(unpackedSize, "unpackedSize", at: start),
                          files: files, kind: kind, sizeOnDiskTable: sizeOnDisk)
    }

    // MARK: Collections

    private static func readStringDictionary(_ scanner: inout JSONScanner) throws(Failure) -> [String: String] {
        guard try scanner.peekKind() == .object else { throw scanner.mismatch(expected: "an object of strings") }
        var result: [String: String] = [:]
        result.reserveCapacity(4)
        try scanner.beginObject()
        var first = true
        while try scanner.nextMember(first: &first) {
            let key = try scanner.readKeyString()
            result[key] = try at(key) { () throws(Failure) in try scanner.readString() }
        }
        return result
    }

    private static func readSizeOnDiskTable(_ scanner: inout JSONScanner) throws(Failure) -> SizeOnDiskTable {
        guard try scanner.peekKind() == .object else { throw scanner.mismatch(expected: "an object of integers") }
        var pairs: [(blockSize: Int64, bytes: Int64)] = []
        pairs.reserveCapacity(BundleInfo.publishedBlockSizes.count)
        try scanner.beginObject()
        var first = true
        while try scanner.nextMember(first: &first) {
            let key = try scanner.readKeyString()
            guard let blockSize = Int64(key) else { throw scanner.failure("sizeOnDisk key '\(key)' is not a block size in bytes") }
            if pairs.contains(where: { $0.blockSize == blockSize }) { throw scanner.failure("sizeOnDisk names one block size twice") }
            pairs.append((blockSize, try at(key) { () throws(Failure) in try scanner.readInt64() }))
        }
        return SizeOnDiskTable(pairs)
    }

    private static func readDigests(_ scanner: inout JSONScanner) throws(Failure) -> [BundleDigest] {
        try readArray(&scanner, of: "bundle digests") { (scanner: inout JSONScanner) throws(Failure) in
            let start = scanner.offset
            guard try scanner.peekKind() == .string else { throw scanner.mismatch(expected: "a bundle digest string") }
            switch try scanner.readPrefixedHex(prefix: "sha256:", digits: 64) {
            case .hex(let hex): return BundleDigest(hex: hex)
            case .other(let text): throw Failure(offset: start, reason: "'\(text)' is not a bundle digest (sha256:<64 lower-case hex digits>)")
            }
        }
    }

    // MARK: Helpers

    private static func readInt(_ scanner: inout JSONScanner) throws(Failure) -> Int { Int(try scanner.readInt64()) }

}
