import Foundation
import MapFormat
import Testing

/// Each format's fields are declared once (`Catalog.Field`, `ImageFile.Field`, …). These tests are
/// driven by those declarations: a value with every field set is written by the writer, every
/// declared key must be in the bytes and no other, and the fast reader must give the value back.
/// A field added to the declarations, the writer or the reader alone fails here.
@Suite struct FieldTableRoundTripTests {
    private static let digest = BundleDigest(hex: String(repeating: "0123456789abcdef", count: 4))

    /// Every field of every object of `catalog.json`, optional ones included.
    private static var fullCatalog: Catalog {
        var bundle = BundleInfo(
            url: "bundles/01/x.tar.zst", size: 10, unpackedSize: 20, files: 3, kind: "tiles", sizeOnDisk: ["4096": 12288, "512": 10240])
        bundle.chunked = ChunkedBundle(
            url: "bundles/01/x.zck", size: 300, headerSize: 290, headerSHA256: String(repeating: "a", count: 64), chunkSize: 16384,
            minChunk: 4096, maxChunk: 65536, normalization: 1, level: 3, sqlitePages: true)
        let region = CatalogRegion(
            id: "europe", parent: "world", names: ["en": "Europe"], bundles: [digest],
            center: [1.5, -2.25], bbox: [0, 1, 2, 3], cities: ["Bern"], released: "2026-11-20T00:00:00Z")
        var catalog = Catalog(
            catalog: "demo-world", mapVersion: MapVersion("2026.11.0"), released: "2026-11-20T00:00:00Z",
            regions: [region], bundles: [digest: bundle])
        catalog.supportedUntil = "2027-11-20T00:00:00Z"
        return catalog
    }

    /// Every field of every object of `manifest.json`, optional ones included.
    private static var fullManifest: ImageManifest {
        let region = ImageRegion(
            id: "europe", parent: "world", name: "Europa", names: ["en": "Europe"], bundles: [digest], sizeOnDiskInBytes: 8192,
            center: [1.5, -2.25], bbox: [0, 1, 2, 3], cities: ["Bern"], released: "2026-11-20T00:00:00Z")
        let bundle = ImageBundle(digest: digest, size: 10, url: "bundles/01/x.tar.zst", files: 1, unpackedSize: 20)
        let file = ImageFile(
            path: try! StorePath(validating: "tiles/a.db"), size: 20, sha256: SHA256Digest(hex: String(repeating: "c", count: 64))!, bundle: digest)
        let seed = ImageCacheSeed(sha256: SHA256Digest(hex: String(repeating: "d", count: 64))!, size: 4096, entries: 2, regions: ["europe"])
        var manifest = ImageManifest(
            name: "demo", catalog: "demo-world", mapVersion: MapVersion("2026.11.0"), built: "2026-11-20T00:00:00Z",
            mappackVersion: "1.0.0", blockSize: 4096, language: "de", regions: [region], bundles: [bundle],
            files: [file], cacheSeed: seed)
        manifest.imageID = String(repeating: "e", count: 64)
        return manifest
    }

    private func object(_ value: Any?) throws -> [String: Any] {
        try #require(value as? [String: Any])
    }

    private func firstElement(_ value: Any?) throws -> [String: Any] {
        try object(try #require(value as? [Any]).first)
    }

    private func keys<Field: JSONField>(_ object: [String: Any], _: Field.Type) -> Set<String> {
        #expect(Set(object.keys) == Set(Field.allCases.map(\.rawValue)), "\(Field.self)")
        return Set(object.keys)
    }

    @Test func catalogWriterWritesEveryDeclaredFieldAndTheReaderReadsItBack() throws {
        let catalog = Self.fullCatalog
        let bytes = try CanonicalJSON.encode(catalog)
        let top = try object(try JSONSerialization.jsonObject(with: bytes))
        _ = keys(top, Catalog.Field.self)
        _ = keys(try firstElement(top[Catalog.Field.regions.rawValue]), CatalogRegion.Field.self)
        let bundles = try object(top[Catalog.Field.bundles.rawValue])
        let bundle = try object(bundles[Self.digest.description])
        _ = keys(bundle, BundleInfo.Field.self)
        _ = keys(try object(bundle[BundleInfo.Field.chunked.rawValue]), ChunkedBundle.Field.self)
        #expect(try CatalogReader.read(bytes, file: "catalog.json") == catalog)
    }

    @Test func manifestWriterWritesEveryDeclaredFieldAndTheReadersReadItBack() throws {
        let manifest = Self.fullManifest
        let bytes = try manifest.canonicalBytes()
        let top = try object(try JSONSerialization.jsonObject(with: bytes))
        _ = keys(top, ImageManifest.Field.self)
        _ = keys(try firstElement(top[ImageManifest.Field.regions.rawValue]), ImageRegion.Field.self)
        _ = keys(try firstElement(top[ImageManifest.Field.bundles.rawValue]), ImageBundle.Field.self)
        _ = keys(try firstElement(top[ImageManifest.Field.files.rawValue]), ImageFile.Field.self)
        _ = keys(try object(top[ImageManifest.Field.cacheSeed.rawValue]), ImageCacheSeed.Field.self)
        #expect(try ManifestReader.read(bytes, file: "manifest.json") == manifest)
    }

    /// The hand-written file entry (the build's streamed manifest) spells the declared keys, and
    /// equals what the encoder writes.
    @Test func handWrittenFileEntryMatchesTheDeclarationsAndTheEncoder() throws {
        let file = Self.fullManifest.files[0]
        var entry = Data()
        ImageManifest.appendFileEntry(path: file.path.string, size: file.size, sha256: file.sha256, bundle: file.bundle, first: true, to: &entry)
        _ = keys(try object(try JSONSerialization.jsonObject(with: entry)), ImageFile.Field.self)
        #expect(entry == (try CanonicalJSON.encode(file)))
        #expect(try Self.fullManifest.canonicalBytesWithoutIDForTests() == (try Self.fullManifest.bytesForID()))
    }

    /// `catalog.json.sig` writes every declared field, signs all but `signature` and `cosignature`, and reads back.
    @Test func catalogSignatureWritesEveryDeclaredFieldAndSignsAllButTheSignature() throws {
        var signature = CatalogSignature(
            catalog: "demo-world", version: 3, epoch: 1, expires: "2027-01-15T08:00:00Z",
            sha256: try #require(SHA256Digest(hex: String(repeating: "a", count: 64))),
            nextKey: "mappack-ed25519-public:next", keyID: "0123456789abcdef", signature: "c2ln")
        signature.cosignature = CatalogSignature.Cosignature(keyID: "fedcba9876543210", signature: "Y29zaWdu")
        let bytes = try CanonicalJSON.encode(signature)
        _ = keys(try object(try JSONSerialization.jsonObject(with: bytes)), CatalogSignature.Field.self)
        #expect(String(decoding: bytes, as: UTF8.self).contains("\"sha256\":\"\(String(repeating: "a", count: 64))\""))
        let signed = try object(try JSONSerialization.jsonObject(with: try signature.signedBytes))
        #expect(Set(signed.keys) == Set(CatalogSignature.Field.allCases.filter { $0 != .signature && $0 != .cosignature }.map(\.rawValue)))
        #expect(try CatalogSignature.parse(bytes, source: "catalog.json.sig") == signature)
    }

    /// Keys longer than the 16 bytes matched as two words (`sizeOnDiskInBytes`) are matched byte
    /// by byte: escaped or not, unknown ones skipped, repeated ones refused.
    @Test func longKeysMatchByTheirBytes() throws {
        let manifest = Self.fullManifest
        let text = String(decoding: try manifest.canonicalBytes(), as: UTF8.self)
        let key = "\"\(ImageRegion.Field.sizeOnDiskInBytes.rawValue)\""
        #expect(key.utf8.count > 18)
        let escaped = text.replacingOccurrences(of: key, with: #""sizeOnDisk\u0049nBytes""#)
        #expect(try ManifestReader.read(Data(escaped.utf8), file: "manifest.json") == manifest)
        let unknown = text.replacingOccurrences(of: key, with: #""sizeOnDiskInBytesToo":1,"# + key)
        #expect(try ManifestReader.read(Data(unknown.utf8), file: "manifest.json") == manifest)
        let twice = text.replacingOccurrences(of: key, with: key + ":1," + key)
        #expect(throws: JSONFileError.self) { try ManifestReader.read(Data(twice.utf8), file: "manifest.json") }
    }

    /// The id field that the build splices and verification blanks is the declared key.
    @Test func idFieldIsTheDeclaredKey() throws {
        let manifest = Self.fullManifest
        let bytes = try manifest.canonicalBytes()
        #expect(bytes.range(of: ImageManifest.idField(manifest.imageID)) != nil)
        #expect(ImageManifest.bytesForID(fromFile: bytes, imageID: manifest.imageID) == (try manifest.bytesForID()))
    }

    /// The streaming reader gives the same manifest, its file entries read straight from the bytes.
    @Test func manifestStreamReadsEveryDeclaredFieldBack() throws {
        let manifest = Self.fullManifest
        let bytes = try manifest.canonicalBytes()
        var files: [ImageFile] = []
        let streamed = try unsafe bytes.withUnsafeBytes { raw in
            var stream = try unsafe ManifestStream(raw, file: "manifest.json")
            while let file = try stream.nextFile() { files.append(file) }
            return try stream.finish()
        }
        #expect(streamed == manifest.header)
        #expect(files == manifest.files)
    }
}

extension ImageManifest {
    /// `sealed`'s bytes with the id left empty: the hand-written file list within the encoder's shell.
    fileprivate func canonicalBytesWithoutIDForTests() throws -> Data {
        try sealed(hash: { _ in "" }).bytes
    }
}
