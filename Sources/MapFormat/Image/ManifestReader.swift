import Foundation

/// The one reader of `manifest.json` (`mappack-image/1`), in one pass over its bytes with the
/// same result and the same required fields as a `Decodable` reading of `ImageManifest` would
/// give: a 60k-file image has a ~16 MB manifest, and Foundation's `JSONDecoder` made it a large
/// part of `mappack verify`'s time. The same patterns as `CatalogReader`.
///
/// Its projections, each a type of its own: `read` gives the whole `ImageManifest`;
/// `ManifestStream` (the parser `read` drives) hands the file entries out one by one and then
/// the `ManifestHeader`; `imageIDFromEnd` gives the id alone, from the bytes' end. What a caller
/// gets says what it may rely on.
public enum ManifestReader {
    /// The manifest in `data`; `file` names it in errors. Throws `JSONFileError` with a line and
    /// column, and the path to the offending value (`files[2].sha256`); for a document that decodes
    /// but lists a path that is not a `StorePath`, `RefusedEntry`. Negative sizes are read as written.
    public static func read(_ data: Data, file: String) throws -> ImageManifest {
        let (manifest, refusal) = try unsafe data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws -> (ImageManifest, ManifestEntryRefusal?) in
            do throws(Failure) {
                return try unsafe readManifest(raw, file: file)
            } catch var error {
                // JSONDecoder parses the whole document before decoding, so a syntax error anywhere
                // wins over a missing field or a wrong type found earlier. Only failures pay for this pass.
                var checker = unsafe JSONScanner(raw)
                do throws(Failure) {
                    try checker.skipValue()
                    try checker.expectEnd()
                } catch let syntax {
                    // At the same offset it is the failure already found, which knows its path.
                    if syntax.offset > error.offset { error = syntax }
                }
                throw unsafe fileError(error, in: JSONScanner(raw), file: file)
            }
        }
        if let refusal { throw RefusedEntry(manifest: manifest, refusal: refusal) }
        return manifest
    }

    /// A manifest that decodes but lists a path that is not a `StorePath`: the first entry it may not
    /// list (such a path, or a negative size before it), and the manifest without the refused paths
    /// (for the checks that come before the file list's, as the format's).
    public struct RefusedEntry: Error, CustomStringConvertible {
        /// The manifest, its refused entries left out.
        public let manifest: ImageManifest
        /// The first refused entry, in file order.
        public let refusal: ManifestEntryRefusal

        public var description: String { refusal.description }
    }

    typealias Failure = JSONScanner.Failure

    // MARK: Objects

    /// The manifest in `bytes`, streamed with its entries kept, and the first entry of `files` it may
    /// not list when one of them is a path that is not a `StorePath` (left out of `files`).
    private static func readManifest(_ bytes: UnsafeRawBufferPointer, file: String) throws(Failure) -> (ImageManifest, ManifestEntryRefusal?) {
        var stream = try unsafe ManifestStream(parsing: bytes, file: file, keepingBundles: true)
        var files: [ImageFile] = []
        var refusal: ManifestEntryRefusal?
        var refusedPath = false
        while try stream.advance({ entry in
            switch entry.file {
            case .success(let file):
                files.append(file)
                if file.size < 0 { refusal = refusal ?? .negativeSize(path: file.path) }
            case .failure(let refused):
                refusal = refusal ?? refused
                refusedPath = true
            }
        }) {}
        let (header, bundles) = try stream.finishMembers()
        return (ImageManifest(header, bundles: bundles, files: files), refusedPath ? refusal : nil)
    }

    /// The top-level members read so far. `files` is left to the caller (`ManifestStream` hands its
    /// entries out one by one; `read` keeps them).
    struct Members {
        var format: String?, imageID: String?, name: String?, catalog: String?, mapVersion: MapVersion?, built: String?
        var mappackVersion: String?, blockSize: Int64?, language: String?
        var regions: [ImageRegion]?, bundles: [ImageBundle]?, sawFiles = false, cacheSeed: ImageCacheSeed?
        /// False to check the bundle list but keep it empty (a verification does not need it).
        var keepsBundles = true

        /// Reads the value of `field`, which is not `files`.
        mutating func read(_ field: ImageManifest.Field, from scanner: inout JSONScanner) throws(Failure) {
            try at(field) { () throws(Failure) in
                switch field {
                case .format: format = try scanner.readString()
                case .imageID: imageID = try scanner.readString()
                case .name: name = try scanner.readString()
                case .catalog: catalog = try scanner.readString()
                case .mapVersion: mapVersion = MapVersion(try scanner.readString())
                case .built: built = try scanner.readString()
                case .mappackVersion: mappackVersion = try scanner.readString()
                case .blockSize: blockSize = try scanner.readInt64()
                case .language: language = try optional(&scanner, readStringValue)
                case .regions: regions = try readArray(&scanner, of: "regions", readRegion)
                case .bundles where keepsBundles: bundles = try readArray(&scanner, of: "bundles", readBundle)
                case .bundles:
                    _ = try readArray(&scanner, of: "bundles") { (scanner: inout JSONScanner) throws(Failure) in _ = try readBundle(&scanner) }
                    bundles = []
                case .files: preconditionFailure("the caller reads files")
                case .cacheSeed: cacheSeed = try optional(&scanner, readCacheSeed)
                }
            }
        }

        /// The header and the bundle list, or the first missing required field, checked in the
        /// order a synthesized `init(from:)` decodes them (declaration order, `files` among them);
        /// `object` is the manifest's object.
        func parts(of object: JSONObjectFields<ImageManifest.Field>) throws(Failure) -> (ManifestHeader, bundles: [ImageBundle]) {
            let formatValue = try object.required(format, .format)
            let imageIDValue = try object.required(imageID, .imageID)
            let header = ManifestHeader(
                format: formatValue, imageID: imageIDValue, name: try object.required(name, .name),
                catalog: try object.required(catalog, .catalog), mapVersion: try object.required(mapVersion, .mapVersion),
                built: try object.required(built, .built), mappackVersion: try object.required(mappackVersion, .mappackVersion),
                blockSize: try object.required(blockSize, .blockSize), language: language,
                regions: try object.required(regions, .regions), cacheSeed: cacheSeed)
            let bundleList = try object.required(bundles, .bundles)
            _ = try object.required(sawFiles ? true : nil, .files)
            return (header, bundleList)
        }
    }

    private static func readRegion(_ scanner: inout JSONScanner) throws(Failure) -> ImageRegion {
        var object = try JSONObjectFields<ImageRegion.Field>(&scanner, expected: "a region")
        var id: RegionID?
        var parent: RegionID?
        var name: String?
        var names: [String: String]?
        var bundles: [BundleDigest]?
        var sizeOnDisk: Int64?
        var center: [Double]?
        var bbox: [Double]?
        var cities: [String]?
        var released: String?
        let fields = ImageRegion.Field.table
        while let field = try object.next(&scanner, fields) {
            try at(field) { () throws(Failure) in
                switch field {
                case .id: id = RegionID(try scanner.readString())
                case .parent: parent = try optional(&scanner, readRegionID)
                case .name: name = try scanner.readString()
                case .names: names = try readStringDictionary(&scanner)
                case .bundles: bundles = try readArray(&scanner, of: "bundle digests", readDigest)
                case .sizeOnDiskInBytes: sizeOnDisk = try scanner.readInt64()
                case .center: center = try optional(&scanner, readDoubles)
                case .bbox: bbox = try optional(&scanner, readDoubles)
                case .cities: cities = try optional(&scanner, readStrings)
                case .released: released = try optional(&scanner, readStringValue)
                }
            }
        }
        return ImageRegion(
            id: try object.required(id, .id), parent: parent, name: try object.required(name, .name),
            names: try object.required(names, .names), bundles: try object.required(bundles, .bundles),
            sizeOnDiskInBytes: try object.required(sizeOnDisk, .sizeOnDiskInBytes),
            center: center, bbox: bbox, cities: cities, released: released)
    }

    private static func readBundle(_ scanner: inout JSONScanner) throws(Failure) -> ImageBundle {
        var object = try JSONObjectFields<ImageBundle.Field>(&scanner, expected: "a bundle")
        var digest: BundleDigest?
        var size: Int64?
        var url: String?
        var files: Int?
        var unpackedSize: Int64?
        let fields = ImageBundle.Field.table
        while let field = try object.next(&scanner, fields) {
            try at(field) { () throws(Failure) in
                switch field {
                case .digest: digest = try readDigest(&scanner)
                case .size: size = try scanner.readInt64()
                case .url: url = try scanner.readString()
                case .files: files = Int(try scanner.readInt64())
                case .unpackedSize: unpackedSize = try scanner.readInt64()
                }
            }
        }
        return ImageBundle(
            digest: try object.required(digest, .digest), size: try object.required(size, .size),
            url: try object.required(url, .url), files: try object.required(files, .files),
            unpackedSize: try object.required(unpackedSize, .unpackedSize))
    }

    /// An element of `files` as written, its path not yet checked.
    struct FileFields {
        var path: String
        var size: Int64
        var sha256: SHA256Digest
        var bundle: BundleDigest
    }

    /// The hot path: tens of thousands of these. Locals only; the path is the only allocation
    /// kept (the digests are read into words in place).
    static func readFileFields(_ scanner: inout JSONScanner) throws(Failure) -> FileFields {
        var object = try JSONObjectFields<ImageFile.Field>(&scanner, expected: "a file")
        var path: String?
        var size: Int64?
        var sha256: SHA256Digest?
        var bundle: BundleDigest?
        let fields = ImageFile.Field.table
        while let field = try object.next(&scanner, fields) {
            try at(field) { () throws(Failure) in
                switch field {
                case .path: path = try scanner.readString()
                case .size: size = try scanner.readInt64()
                case .sha256: sha256 = try readSHA256(&scanner)
                case .bundle: bundle = try readDigest(&scanner)
                }
            }
        }
        return FileFields(
            path: try object.required(path, .path), size: try object.required(size, .size),
            sha256: try object.required(sha256, .sha256), bundle: try object.required(bundle, .bundle))
    }

    private static func readCacheSeed(_ scanner: inout JSONScanner) throws(Failure) -> ImageCacheSeed {
        var object = try JSONObjectFields<ImageCacheSeed.Field>(&scanner, expected: "a cache seed")
        var sha256: SHA256Digest?
        var size: Int64?
        var entries: Int?
        var regions: [RegionID]?
        let fields = ImageCacheSeed.Field.table
        while let field = try object.next(&scanner, fields) {
            try at(field) { () throws(Failure) in
                switch field {
                case .sha256: sha256 = try readSHA256(&scanner)
                case .size: size = try scanner.readInt64()
                case .entries: entries = Int(try scanner.readInt64())
                case .regions: regions = try readArray(&scanner, of: "region ids", readRegionID)
                }
            }
        }
        return ImageCacheSeed(
            sha256: try object.required(sha256, .sha256), size: try object.required(size, .size),
            entries: try object.required(entries, .entries), regions: try object.required(regions, .regions))
    }

    // MARK: Values

    private static func readStringDictionary(_ scanner: inout JSONScanner) throws(Failure) -> [String: String] {
        guard try scanner.peekKind() == .object else { throw scanner.mismatch(expected: "an object of strings") }
        var result: [String: String] = [:]
        // A region's names: about a dozen languages, placed without growing the table on the way.
        result.reserveCapacity(16)
        try scanner.beginObject()
        var first = true
        while try scanner.nextMember(first: &first) {
            let key = try scanner.readKeyString()
            guard result[key] == nil else { throw Failure.duplicateKey(key, at: scanner.offset) }
            result[key] = try at(key) { () throws(Failure) in try scanner.readString() }
        }
        return result
    }
}
