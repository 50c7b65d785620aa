import Foundation

/// Decodes `catalog.json` in one pass over its bytes, with the same result and the same
/// required fields as `Catalog`'s `Decodable` conformance, many times faster: a full-world
/// catalog is ~9 MB, and decoding it is most of `mappack plan`'s time.
///
/// Where the time goes, and what keeps it low: keys are matched as machine words, digests are
/// decoded from their hex in place, integers in one pass, and arrays are read into reused scratch
/// buffers and copied out at their exact size; every bundle's `sizeOnDisk` table lives in one
/// shared array, and repeated strings (release dates) share one storage.
public enum CatalogReader {
    /// The catalog in `data`; `file` names it in errors. Throws `JSONFileError` with a line and
    /// column, and the path to the offending value (`regions[3].parent`).
    public static func read(_ data: Data, file: String) throws -> Catalog {
        try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws -> Catalog in
            var reader = Reader(JSONScanner(raw))
            do throws(JSONScanner.Failure) {
                return try reader.readCatalog()
            } catch {
                throw fileError(error, in: reader.scanner, file: file)
            }
        }
    }
}

extension CatalogReader {
    private typealias Failure = JSONScanner.Failure

    private enum CatalogField: Int {
        case format, catalog, mapVersion, released, supportedUntil, regions, bundles
        static let keys = JSONKeys(["format", "catalog", "mapVersion", "released", "supportedUntil", "regions", "bundles"])
    }

    private enum RegionField: Int {
        case id, parent, names, center, bbox, bundles, cities, released
        static let keys = JSONKeys(["id", "parent", "names", "center", "bbox", "bundles", "cities", "released"])
    }

    private enum BundleField: Int {
        case url, size, unpackedSize, files, kind, sizeOnDisk, chunked
        static let keys = JSONKeys(["url", "size", "unpackedSize", "files", "kind", "sizeOnDisk", "chunked"])
    }

    /// One read's state: the scanner and the scratch buffers its values pass through.
    private struct Reader: JSONFieldReading {
        var scanner: JSONScanner
        // Key tables copied out of their statics once, not fetched for every member.
        private let catalogKeys = CatalogField.keys
        private let regionKeys = RegionField.keys
        private let bundleKeys = BundleField.keys
        private var digests: [BundleDigest] = []
        private var doubles: [Double] = []
        private var strings: [String] = []
        private var namePairs: [(language: String, name: String)] = []
        private var blockSizePairs: [(key: Int64, value: Int64)] = []
        private var tables: SizeOnDiskTable.Builder
        /// The last release date read; the next equal one reuses its storage.
        private var lastReleased: String?

        init(_ scanner: JSONScanner) {
            self.scanner = scanner
            tables = SizeOnDiskTable.Builder(bytes: scanner.remainingBytes)
        }

        // MARK: Objects

        mutating func readCatalog() throws(Failure) -> Catalog {
            let start = scanner.offset
            guard try scanner.peekKind() == .object else { throw scanner.mismatch(expected: "an object (a catalog)") }
            var format: String?, name: String?, mapVersion: MapVersion?, released: String?, supportedUntil: String?
            var regions: [CatalogRegion]?, bundles: [BundleDigest: BundleInfo]?
            try scanner.beginObject()
            var first = true
            var seen: UInt32 = 0
            while true {
                let member = try scanner.nextMember(among: catalogKeys, first: &first)
                if member == .end { break }
                let field = member.known.flatMap(CatalogField.init(rawValue:))
                if let field { try Self.markSeen(field.rawValue, of: catalogKeys, &seen, at: scanner.offset) }
                switch field {
                case .format?: format = try Self.at("format") { () throws(Failure) in try scanner.readString() }
                case .catalog?: name = try Self.at("catalog") { () throws(Failure) in try readPathName("catalog") }
                case .mapVersion?: mapVersion = try Self.at("mapVersion") { () throws(Failure) in MapVersion(try readPathName("mapVersion")) }
                case .released?: released = try Self.at("released") { () throws(Failure) in try readOptionalReleased() }
                case .supportedUntil?: supportedUntil = try Self.at("supportedUntil") { () throws(Failure) in try Self.optional(&scanner, Self.readStringValue) }
                case .regions?: regions = try Self.at("regions") { () throws(Failure) in try readRegions() }
                case .bundles?: bundles = try Self.at("bundles") { () throws(Failure) in try readBundles() }
                case nil: try scanner.skipValue()
                }
            }
            // Syntax errors anywhere come before missing fields, as with JSONDecoder.
            try scanner.expectEnd()
            var catalog = Catalog(catalog: try Self.required(name, "catalog", at: start), mapVersion: try Self.required(mapVersion, "mapVersion", at: start),
                                  released: released, regions: try Self.required(regions, "regions", at: start),
                                  bundles: try Self.required(bundles, "bundles", at: start))
            catalog.format = try Self.required(format, "format", at: start)
            catalog.supportedUntil = supportedUntil
            return catalog
        }

        private mutating func readRegions() throws(Failure) -> [CatalogRegion] {
            guard try scanner.peekKind() == .array else { throw scanner.mismatch(expected: "an array of regions") }
            var regions: [CatalogRegion] = []
            // Room for as many regions as the bytes left could hold (≥ 48 bytes each), so the array
            // never grows by copying; pages past the real count are never touched, so they cost
            // address space, not memory.
            regions.reserveCapacity(scanner.remainingBytes / 48)
            try scanner.beginArray()
            var first = true
            while try scanner.nextElement(first: &first) {
                let region = try Self.at(regions.count) { () throws(Failure) in try readRegion() }
                regions.append(region)
            }
            return regions
        }

        private mutating func readRegion() throws(Failure) -> CatalogRegion {
            let start = scanner.offset
            guard try scanner.peekKind() == .object else { throw scanner.mismatch(expected: "an object (a region)") }
            var id: RegionID?, parent: RegionID?, parentPresent = false, names: [String: String]?
            var center: [Double]?, bbox: [Double]?, bundles: [BundleDigest]?, cities: [String]?, released: String?
            try scanner.beginObject()
            var first = true
            var seen: UInt32 = 0
            while true {
                let member = try scanner.nextMember(among: regionKeys, first: &first)
                if member == .end { break }
                let field = member.known.flatMap(RegionField.init(rawValue:))
                if let field { try Self.markSeen(field.rawValue, of: regionKeys, &seen, at: scanner.offset) }
                switch field {
                case .id?: id = try Self.at("id") { () throws(Failure) in try readRegionIDChecked() }
                case .parent?:
                    parentPresent = true
                    parent = try Self.at("parent") { () throws(Failure) in try Self.optional(&scanner, Self.readRegionID) }
                case .names?: names = try Self.at("names") { () throws(Failure) in try readNames() }
                case .center?: center = try Self.at("center") { () throws(Failure) in try readOptionalDoubles() }
                case .bbox?: bbox = try Self.at("bbox") { () throws(Failure) in try readOptionalDoubles() }
                case .bundles?: bundles = try Self.at("bundles") { () throws(Failure) in try readDigests() }
                case .cities?: cities = try Self.at("cities") { () throws(Failure) in try readOptionalStrings() }
                case .released?: released = try Self.at("released") { () throws(Failure) in try readOptionalReleased() }
                case nil: try scanner.skipValue()
                }
            }
            let regionID = try Self.required(id, "id", at: start)
            guard parentPresent else {
                throw Failure(offset: start, reason: "missing required field \"parent\" (region '\(regionID)'; use null at a root)", path: [.key("parent")])
            }
            return CatalogRegion(id: regionID, parent: parent, names: try Self.required(names, "names", at: start),
                                 bundles: try Self.required(bundles, "bundles", at: start),
                                 center: center, bbox: bbox, cities: cities, released: released)
        }

        private mutating func readBundles() throws(Failure) -> [BundleDigest: BundleInfo] {
            guard try scanner.peekKind() == .object else { throw scanner.mismatch(expected: "an object of bundles by digest") }
            // Collected first, so the dictionary is sized once for the real count (a Dictionary
            // keeps a quarter to a half of its buckets empty; guessing high wastes megabytes).
            var entries: [(digest: BundleDigest, info: BundleInfo, offset: Int)] = []
            // Room for as many bundles as the bytes left could hold (≥ 112 bytes each), as in
            // `readRegions`.
            entries.reserveCapacity(scanner.remainingBytes / 112)
            try scanner.beginObject()
            var first = true
            while try scanner.nextMember(first: &first) {
                let keyStart = scanner.offset
                // The same rule as `BundleDigest(_:)`, checked on the bytes without its copies.
                switch try scanner.readKeyPrefixedHex256(prefix: "sha256:") {
                case .words(let w0, let w1, let w2, let w3):
                    let digest = BundleDigest(words: w0, w1, w2, w3)
                    let info = try Self.at(spelling: { digest.description }) { () throws(Failure) in try readBundle() }
                    entries.append((digest, info, keyStart))
                case .other(let key):
                    throw Failure(offset: keyStart, reason: "bundle key '\(key)' is not a digest (sha256:<64 lower-case hex digits>)")
                }
            }
            var bundles = [BundleDigest: BundleInfo](minimumCapacity: entries.count)
            // Popped from the end, so each entry moves into the dictionary without a copy.
            while var entry = entries.popLast() {
                if let table = entry.info.sizeOnDisk { entry.info.sizeOnDisk = tables.attached(table) }
                if bundles.updateValue(entry.info, forKey: entry.digest) != nil {
                    // Popped from the end: the entry already there is the later one.
                    throw Self.duplicateKey(entry.digest.description, at: entry.offset)
                }
            }
            return bundles
        }

        private mutating func readBundle() throws(Failure) -> BundleInfo {
            let start = scanner.offset
            guard try scanner.peekKind() == .object else { throw scanner.mismatch(expected: "an object (a bundle)") }
            var url: String?, size: Int64?, unpackedSize: Int64?, files: Int?, kind: String?, sizeOnDisk: SizeOnDiskTable?
            var chunked: ChunkedBundle?
            try scanner.beginObject()
            var first = true
            var seen: UInt32 = 0
            while true {
                let member = try scanner.nextMember(among: bundleKeys, first: &first)
                if member == .end { break }
                let field = member.known.flatMap(BundleField.init(rawValue:))
                if let field { try Self.markSeen(field.rawValue, of: bundleKeys, &seen, at: scanner.offset) }
                switch field {
                case .url?: url = try Self.at("url") { () throws(Failure) in try scanner.readString() }
                case .size?: size = try Self.at("size") { () throws(Failure) in try scanner.readInt64() }
                case .unpackedSize?: unpackedSize = try Self.at("unpackedSize") { () throws(Failure) in try scanner.readInt64() }
                case .files?: files = try Self.at("files") { () throws(Failure) in try scanner.readNull() ? nil : Int(try scanner.readInt64()) }
                case .kind?: kind = try Self.at("kind") { () throws(Failure) in try Self.optional(&scanner, Self.readStringValue) }
                case .sizeOnDisk?: sizeOnDisk = try Self.at("sizeOnDisk") { () throws(Failure) in try readOptionalSizeOnDiskTable() }
                case .chunked?: chunked = try Self.at("chunked") { () throws(Failure) in try readOptionalChunked() }
                case nil: try scanner.skipValue()
                }
            }
            var info = BundleInfo(url: try Self.required(url, "url", at: start), size: try Self.required(size, "size", at: start),
                                  unpackedSize: try Self.required(unpackedSize, "unpackedSize", at: start),
                                  files: files, kind: kind, sizeOnDiskTable: sizeOnDisk)
            info.chunked = chunked
            return info
        }

        /// `"chunked": {"url": …, "size": N, "headerSize": N, "headerSHA256": "<hex>"}` or null (issue 21).
        private mutating func readOptionalChunked() throws(Failure) -> ChunkedBundle? {
            if try scanner.readNull() { return nil }
            let start = scanner.offset
            guard try scanner.peekKind() == .object else { throw scanner.mismatch(expected: "an object (a chunked bundle)") }
            var url: String?, size: Int64?, headerSize: Int64?, headerSHA256: String?
            try scanner.beginObject()
            var first = true
            while try scanner.nextMember(first: &first) {
                let key = try scanner.readKeyString()
                switch key {
                case "url": url = try Self.at(key) { () throws(Failure) in try scanner.readString() }
                case "size": size = try Self.at(key) { () throws(Failure) in try scanner.readInt64() }
                case "headerSize": headerSize = try Self.at(key) { () throws(Failure) in try scanner.readInt64() }
                case "headerSHA256": headerSHA256 = try Self.at(key) { () throws(Failure) in try scanner.readString() }
                default: try scanner.skipValue()
                }
            }
            return ChunkedBundle(url: try Self.required(url, "url", at: start), size: try Self.required(size, "size", at: start),
                                 headerSize: try Self.required(headerSize, "headerSize", at: start),
                                 headerSHA256: try Self.required(headerSHA256, "headerSHA256", at: start))
        }

        // MARK: Values

        /// A string that becomes part of file names (`PathName`), refused at its own position.
        private mutating func readPathName(_ field: String) throws(Failure) -> String {
            let start = scanner.offset
            let text = try scanner.readString()
            if let reason = PathName.problem(text) { throw Failure(offset: start, reason: "\(field) '\(text)' \(reason); \(PathName.rule)") }
            return text
        }

        /// A region id, checked against `PathName.regionIDProblem` at its own position.
        private mutating func readRegionIDChecked() throws(Failure) -> RegionID {
            let start = scanner.offset
            let text = try scanner.readString()
            if let reason = PathName.regionIDProblem(text) {
                throw Failure(offset: start, reason: "region id '\(text)' \(reason); an id is names joined by '/', and \(PathName.rule)")
            }
            return RegionID(text)
        }

        private mutating func readNames() throws(Failure) -> [String: String] {
            guard try scanner.peekKind() == .object else { throw scanner.mismatch(expected: "an object of strings") }
            namePairs.removeAll(keepingCapacity: true)
            try scanner.beginObject()
            var first = true
            while try scanner.nextMember(first: &first) {
                let language = try scanner.readKeyString()
                let name = try Self.at(language) { () throws(Failure) in try scanner.readString() }
                namePairs.append((language, name))
            }
            // Sized for the real count; a repeated language keeps its last name, as before.
            var names = [String: String](minimumCapacity: namePairs.count)
            for pair in namePairs where names.updateValue(pair.name, forKey: pair.language) != nil {
                throw Self.duplicateKey(pair.language, at: scanner.offset)
            }
            return names
        }

        private mutating func readOptionalReleased() throws(Failure) -> String? {
            if try scanner.readNull() { return nil }
            let released = try scanner.readString(reusing: lastReleased)
            lastReleased = released
            return released
        }

        private mutating func readOptionalDoubles() throws(Failure) -> [Double]? {
            if try scanner.readNull() { return nil }
            doubles.removeAll(keepingCapacity: true)
            if scanner.readPlainDecimalArray(into: &doubles) { return Self.exactCopy(doubles) }
            try Self.readArray(&scanner, of: "numbers", into: &doubles) { (scanner: inout JSONScanner) throws(Failure) in try scanner.readDouble() }
            return Self.exactCopy(doubles)
        }

        private mutating func readOptionalStrings() throws(Failure) -> [String]? {
            if try scanner.readNull() { return nil }
            try Self.readArray(&scanner, of: "strings", into: &strings, Self.readStringValue)
            return Self.exactCopy(strings)
        }

        private mutating func readDigests() throws(Failure) -> [BundleDigest] {
            digests.removeAll(keepingCapacity: true)
            if try scanner.peekKind() == .array, scanner.readPlainHex256Array(prefix: "sha256:", into: &digests, BundleDigest.init(words:_:_:_:)) {
                return Self.exactCopy(digests)
            }
            try Self.readArray(&scanner, of: "bundle digests", into: &digests) { (scanner: inout JSONScanner) throws(Failure) in
                let start = scanner.offset
                guard try scanner.peekKind() == .string else { throw scanner.mismatch(expected: "a bundle digest string") }
                switch try scanner.readPrefixedHex256(prefix: "sha256:") {
                case .words(let w0, let w1, let w2, let w3): return BundleDigest(words: w0, w1, w2, w3)
                case .other(let text): throw Failure(offset: start, reason: "'\(text)' is not a bundle digest (sha256:<64 lower-case hex digits>)")
                }
            }
            return Self.exactCopy(digests)
        }

        private mutating func readOptionalSizeOnDiskTable() throws(Failure) -> SizeOnDiskTable? {
            if try scanner.readNull() { return nil }
            guard try scanner.peekKind() == .object else { throw scanner.mismatch(expected: "an object of integers") }
            blockSizePairs.removeAll(keepingCapacity: true)
            if scanner.readPlainIntegerObject(into: &blockSizePairs) { return tables.add(blockSizePairs) }
            try scanner.beginObject()
            var first = true
            while try scanner.nextMember(first: &first) {
                let blockSize: Int64, key: String?
                switch try scanner.readKeyInteger() {
                case .digits(let value): (blockSize, key) = (value, nil)
                case .spelled(let value, let text): (blockSize, key) = (value, text)
                case .other(let text): throw scanner.failure("sizeOnDisk key '\(text)' is not a block size in bytes")
                }
                if blockSizePairs.contains(where: { $0.key == blockSize }) { throw scanner.failure("sizeOnDisk names one block size twice") }
                let bytes = try Self.at(spelling: { key ?? String(blockSize) }) { () throws(Failure) in try scanner.readInt64() }
                blockSizePairs.append((blockSize, bytes))
            }
            return tables.add(blockSizePairs)
        }
    }
}
