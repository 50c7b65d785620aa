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
        try read(data, file: file, detail: .full)
    }

    /// The catalog in `data`, keeping what `detail` says; the same checks whatever it keeps.
    static func read(_ data: Data, file: String, detail: CatalogDetail) throws -> Catalog {
        unsafe try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws -> Catalog in
            var reader = unsafe Reader(JSONScanner(raw), detail: detail)
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

    /// One read's state: the scanner and the scratch buffers its values pass through.
    private struct Reader: JSONFieldReading {
        var scanner: JSONScanner
        // Field tables copied out of their statics once, not fetched for every member.
        private let catalogFields = Catalog.Field.table
        private let regionFields = CatalogRegion.Field.table
        private let bundleFields = BundleInfo.Field.table
        private var digests: [BundleDigest] = []
        private var doubles: [Double] = []
        private var strings: [String] = []
        private var namePairs: [(language: String, name: String)] = []
        private var blockSizePairs: [(key: Int64, value: Int64)] = []
        private var tables: SizeOnDiskTable.Builder
        /// The last release date read; the next equal one reuses its storage.
        private var lastReleased: String?
        /// With `CatalogDetail.plan` without `allNames`, the languages whose names a region keeps;
        /// nil keeps every name.
        private let nameLanguages: [String]?
        /// The languages of the names object being read (a `plan` read keeps few of its names but
        /// refuses a repeated language as a `full` one does).
        private var seenLanguages: [String] = []
        /// `nameLanguages` as bytes when every one is ASCII: names are then matched on the bytes of
        /// their keys (nil: as strings).
        private let asciiNameLanguages: [[UInt8]]?
        /// The keys of the names object being read, on that path.
        private var seenKeys: [JSONScanner.ASCIIKey] = []

        init(_ scanner: JSONScanner, detail: CatalogDetail) {
            self.scanner = scanner
            tables = SizeOnDiskTable.Builder(bytes: scanner.remainingBytes)
            switch detail {
            case .full: (keepsEverything, nameLanguages) = (true, nil)
            case .plan(_, allNames: true): (keepsEverything, nameLanguages) = (false, nil)
            case .plan(let language, allNames: false): (keepsEverything, nameLanguages) = (false, LocalizedNames.candidates(language: language))
            }
            if let languages = nameLanguages, languages.allSatisfy({ $0.utf8.allSatisfy { $0 < 0x80 } }) {
                asciiNameLanguages = languages.map { Array($0.utf8) }
            } else {
                asciiNameLanguages = nil
            }
        }

        /// True for a `full` read.
        private let keepsEverything: Bool

        // MARK: Objects

        mutating func readCatalog() throws(Failure) -> Catalog {
            var object = try JSONObjectFields<Catalog.Field>(&scanner, expected: "a catalog")
            var format: String?
            var name: String?
            var mapVersion: MapVersion?
            var released: String?
            var supportedUntil: String?
            var regions: [CatalogRegion]?
            var bundles: [BundleDigest: BundleInfo]?
            while let field = try object.next(&scanner, catalogFields) {
                try Self.at(field) { () throws(Failure) in
                    switch field {
                    case .format: format = try scanner.readString()
                    case .catalog: name = try readPathName(field)
                    case .mapVersion: mapVersion = MapVersion(try readPathName(field))
                    case .released: released = try readOptionalReleased()
                    case .supportedUntil: supportedUntil = try Self.optional(&scanner, Self.readStringValue)
                    case .regions: regions = try readRegions()
                    case .bundles: bundles = try readBundles()
                    }
                }
            }
            // Syntax errors anywhere come before missing fields, as with JSONDecoder.
            try scanner.expectEnd()
            var catalog = Catalog(
                catalog: try object.required(name, .catalog), mapVersion: try object.required(mapVersion, .mapVersion),
                released: released, regions: try object.required(regions, .regions),
                bundles: try object.required(bundles, .bundles))
            catalog.format = try object.required(format, .format)
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
            var object = try JSONObjectFields<CatalogRegion.Field>(&scanner, expected: "a region")
            var id: RegionID?
            var parent: RegionID?
            var parentPresent = false
            var names: [String: String]?
            var center: [Double]?
            var bbox: [Double]?
            var bundles: [BundleDigest]?
            var cities: [String]?
            var released: String?
            while let field = try object.next(&scanner, regionFields) {
                try Self.at(field) { () throws(Failure) in
                    switch field {
                    case .id: id = try readRegionIDChecked()
                    case .parent:
                        parentPresent = true
                        parent = try Self.optional(&scanner, Self.readRegionID)
                    case .names:
                        if let asciiNameLanguages {
                            names = try readNames(keepingASCII: asciiNameLanguages)
                        } else if let nameLanguages {
                            names = try readNames(keeping: nameLanguages)
                        } else {
                            names = try readNames()
                        }
                    case .center: center = try readOptionalDoubles()
                    case .bbox: bbox = try readOptionalDoubles()
                    case .bundles: bundles = try readDigests()
                    case .cities: cities = try readOptionalStrings()
                    case .released: released = keepsEverything ? try readOptionalReleased() : try skipOptionalString()
                    }
                }
            }
            let regionID = try object.required(id, .id)
            guard parentPresent else {
                let parent = CatalogRegion.Field.parent.rawValue
                throw Failure(
                    offset: object.start, reason: "missing required field \"\(parent)\" (region '\(regionID)'; use null at a root)",
                    path: [.key(parent)])
            }
            return CatalogRegion(
                id: regionID, parent: parent, names: try object.required(names, .names),
                bundles: try object.required(bundles, .bundles),
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
                    throw Failure.duplicateKey(entry.digest.description, at: entry.offset)
                }
            }
            return bundles
        }

        private mutating func readBundle() throws(Failure) -> BundleInfo {
            var object = try JSONObjectFields<BundleInfo.Field>(&scanner, expected: "a bundle")
            var url: String?
            var size: Int64?
            var unpackedSize: Int64?
            var files: Int?
            var kind: String?
            var sizeOnDisk: SizeOnDiskTable?
            var chunked: ChunkedBundle?
            while let field = try object.next(&scanner, bundleFields) {
                try Self.at(field) { () throws(Failure) in
                    switch field {
                    case .url: url = keepsEverything ? try scanner.readString() : try checkURL()
                    case .size: size = try scanner.readInt64()
                    case .unpackedSize: unpackedSize = try scanner.readInt64()
                    case .files: files = try scanner.readNull() ? nil : Int(try scanner.readInt64())
                    case .kind: kind = try Self.optional(&scanner, Self.readStringValue)
                    case .sizeOnDisk: sizeOnDisk = try readOptionalSizeOnDiskTable()
                    case .chunked: chunked = try readOptionalChunked()
                    }
                }
            }
            var info = BundleInfo(
                url: try object.required(url, .url), size: try object.required(size, .size),
                unpackedSize: try object.required(unpackedSize, .unpackedSize),
                files: files, kind: kind, sizeOnDiskTable: sizeOnDisk)
            info.chunked = chunked
            return info
        }

        /// `"chunked": {"url": …, "size": N, "headerSize": N, "headerSHA256": "<hex>", "chunkSize": N, "minChunk": N,
        /// "maxChunk": N, "normalization": N, "level": N, "sqlitePages": B}` (the last six optional) or null (issue 21). The
        /// cutting parameters' ranges are `RegionTree`'s to check.
        private mutating func readOptionalChunked() throws(Failure) -> ChunkedBundle? {
            if try scanner.readNull() { return nil }
            var object = try JSONObjectFields<ChunkedBundle.Field>(&scanner, expected: "an object (a chunked bundle)")
            var url: String?
            var size: Int64?
            var headerSize: Int64?
            var headerSHA256: String?
            var chunkSize: Int?
            var minChunk: Int?
            var maxChunk: Int?
            var normalization: Int?
            var level: Int?
            var sqlitePages: Bool?
            while let field = try object.next(&scanner, ChunkedBundle.Field.table) {
                try Self.at(field) { () throws(Failure) in
                    switch field {
                    case .url: url = try scanner.readString()
                    case .size: size = try scanner.readInt64()
                    case .headerSize: headerSize = try scanner.readInt64()
                    case .headerSHA256: headerSHA256 = try scanner.readString()
                    case .chunkSize: chunkSize = try Self.optional(&scanner, Self.readInt)
                    case .minChunk: minChunk = try Self.optional(&scanner, Self.readInt)
                    case .maxChunk: maxChunk = try Self.optional(&scanner, Self.readInt)
                    case .normalization: normalization = try Self.optional(&scanner, Self.readInt)
                    case .level: level = try Self.optional(&scanner, Self.readInt)
                    case .sqlitePages: sqlitePages = try Self.optional(&scanner, Self.readBool)
                    }
                }
            }
            return ChunkedBundle(
                url: try object.required(url, .url), size: try object.required(size, .size),
                headerSize: try object.required(headerSize, .headerSize),
                headerSHA256: try object.required(headerSHA256, .headerSHA256), chunkSize: chunkSize, minChunk: minChunk,
                maxChunk: maxChunk, normalization: normalization, level: level, sqlitePages: sqlitePages)
        }

        private static func readInt(_ scanner: inout JSONScanner) throws(Failure) -> Int { Int(try scanner.readInt64()) }
        private static func readBool(_ scanner: inout JSONScanner) throws(Failure) -> Bool { try scanner.readBool() }

        // MARK: Values

        /// A string that becomes part of file names (`PathName`), refused at its own position.
        private mutating func readPathName(_ field: Catalog.Field) throws(Failure) -> String {
            let start = scanner.offset
            let text = try scanner.readString()
            if let reason = PathName.problem(text) { throw Failure(offset: start, reason: "\(field.rawValue) '\(text)' \(reason); \(PathName.rule)") }
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
                throw Failure.duplicateKey(pair.language, at: scanner.offset)
            }
            return names
        }

        /// `readNames` for a `plan` read: the same checks, keeping the names of `languages` (or,
        /// when it has none of them, its first, so that it stays non-empty and `name(in:)` answers
        /// as for all of them).
        private mutating func readNames(keeping languages: [String]) throws(Failure) -> [String: String] {
            guard try scanner.peekKind() == .object else { throw scanner.mismatch(expected: "an object of strings") }
            namePairs.removeAll(keepingCapacity: true)
            seenLanguages.removeAll(keepingCapacity: true)
            var keptFirstOnly = false
            try scanner.beginObject()
            var first = true
            while try scanner.nextMember(first: &first) {
                let language = try scanner.readKeyString()
                if seenLanguages.contains(language) { throw Failure.duplicateKey(language, at: scanner.offset) }
                seenLanguages.append(language)
                let wanted = languages.contains(language)
                if wanted || seenLanguages.count == 1 {
                    if keptFirstOnly {
                        namePairs.removeAll(keepingCapacity: true)
                        keptFirstOnly = false
                    }
                    namePairs.append((language, try Self.at(language) { () throws(Failure) in try scanner.readString() }))
                    keptFirstOnly = !wanted
                } else {
                    try Self.at(language) { () throws(Failure) in try scanner.skipString() }
                }
            }
            var names = [String: String](minimumCapacity: namePairs.count)
            for pair in namePairs { names[pair.language] = pair.name }
            return names
        }

        /// `readNames(keeping:)` with every language ASCII: a key in ASCII without escapes (all,
        /// in practice) is compared as bytes, without a `String` for every language and name (the
        /// names were a third of a region's reading); any other as Unicode text, as `"K"` is
        /// `"\u{212A}"`.
        private mutating func readNames(keepingASCII languages: [[UInt8]]) throws(Failure) -> [String: String] {
            guard try scanner.peekKind() == .object else { throw scanner.mismatch(expected: "an object of strings") }
            namePairs.removeAll(keepingCapacity: true)
            seenKeys.removeAll(keepingCapacity: true)
            seenLanguages.removeAll(keepingCapacity: true)
            var keptFirstOnly = false
            try scanner.beginObject()
            var first = true
            while try scanner.nextMember(first: &first) {
                let wanted: Bool
                let language: String?
                switch try scanner.readKeyText() {
                case .ascii(let key):
                    let repeated =
                        seenKeys.contains { scanner.same($0, key) } || (!seenLanguages.isEmpty && seenLanguages.contains(scanner.text(of: key)))
                    if repeated { throw Failure.duplicateKey(scanner.text(of: key), at: scanner.offset) }
                    seenKeys.append(key)
                    wanted = languages.contains { scanner.same(key, $0) }
                    language = wanted || namePairs.isEmpty ? scanner.text(of: key) : nil
                case .text(let text):
                    if seenLanguages.contains(text) || seenKeys.contains(where: { scanner.text(of: $0) == text }) {
                        throw Failure.duplicateKey(text, at: scanner.offset)
                    }
                    seenLanguages.append(text)
                    wanted = nameLanguages?.contains(text) ?? false
                    language = text
                }
                if let language, wanted || seenKeys.count + seenLanguages.count == 1 {
                    if keptFirstOnly {
                        namePairs.removeAll(keepingCapacity: true)
                        keptFirstOnly = false
                    }
                    namePairs.append((language, try scanner.readString()))
                    keptFirstOnly = !wanted
                } else {
                    try scanner.skipString()
                }
            }
            var names = [String: String](minimumCapacity: namePairs.count)
            for pair in namePairs { names[pair.language] = pair.name }
            return names
        }

        /// A `plan` read's bundle URL: checked, not kept (`""`). One that `RegionTree` might
        /// refuse is refused here, and `CatalogSource` reads the catalog again in `full`.
        private mutating func checkURL() throws(Failure) -> String {
            let start = scanner.offset
            if let url = try scanner.readStringUnlessAccepted(RegionTree.urlIsPlainlySafe), RegionTree.urlProblem(url) {
                throw Failure(offset: start, reason: "bundle URL '\(url)' refused")
            }
            return ""
        }

        /// `null` or a string, checked as `readOptionalReleased` checks it; nil.
        private mutating func skipOptionalString() throws(Failure) -> String? {
            if try !scanner.readNull() { try scanner.skipString() }
            return nil
        }

        private mutating func readOptionalReleased() throws(Failure) -> String? {
            if try scanner.readNull() { return nil }
            let released = try scanner.readString(reusing: lastReleased)
            lastReleased = released
            return released
        }

        /// Numbers or null; a `plan` read checks them and keeps nil.
        private mutating func readOptionalDoubles() throws(Failure) -> [Double]? {
            if try scanner.readNull() { return nil }
            doubles.removeAll(keepingCapacity: true)
            if !scanner.readPlainDecimalArray(into: &doubles) {
                try Self.readArray(&scanner, of: "numbers", into: &doubles) { (scanner: inout JSONScanner) throws(Failure) in try scanner.readDouble()
                }
            }
            return keepsEverything ? Self.exactCopy(doubles) : nil
        }

        /// Strings or null; a `plan` read checks them and keeps nil.
        private mutating func readOptionalStrings() throws(Failure) -> [String]? {
            if try scanner.readNull() { return nil }
            guard keepsEverything else {
                guard try scanner.peekKind() == .array else { throw scanner.mismatch(expected: "an array of strings") }
                try scanner.beginArray()
                var first = true
                while try scanner.nextElement(first: &first) { try scanner.skipString() }
                return nil
            }
            try Self.readArray(&scanner, of: "strings", into: &strings, Self.readStringValue)
            return Self.exactCopy(strings)
        }

        private mutating func readDigests() throws(Failure) -> [BundleDigest] {
            digests.removeAll(keepingCapacity: true)
            if try scanner.peekKind() == .array, scanner.readPlainHex256Array(prefix: "sha256:", into: &digests, BundleDigest.init(words:_:_:_:)) {
                return Self.exactCopy(digests)
            }
            try Self.readArray(&scanner, of: "bundle digests", into: &digests, Self.readDigest)
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
                let blockSize: Int64
                let key: String?
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
