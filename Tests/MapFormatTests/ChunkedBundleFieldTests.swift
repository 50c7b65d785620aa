import Foundation
import MapFormat
import Testing

/// The optional `"chunked"` bundle field (issue 21): read by the fast reader and by `Codable`
/// alike, left out when absent, and its parts required when present.
@Suite struct ChunkedBundleFieldTests {
    static let hex = String(repeating: "b", count: 64)

    func catalog(chunked: ChunkedBundle?) -> Catalog {
        let digest = BundleDigest(hex: Self.hex)
        var info = BundleInfo(url: "bundles/bb/\(Self.hex).tar.zst", size: 10, unpackedSize: 20, files: 1, kind: "tiles")
        info.chunked = chunked
        return Catalog(
            catalog: "c", mapVersion: MapVersion("1.0"), released: nil,
            regions: [CatalogRegion(id: "world", parent: nil, names: ["en": "World"], bundles: [digest])], bundles: [digest: info])
    }

    @Test func theFastReaderAndCodableAgreeOnTheChunkedField() throws {
        let chunked = ChunkedBundle(url: "bundles/bb/\(Self.hex).zck", size: 157, headerSize: 147, headerSHA256: String(repeating: "c", count: 64))
        let expected = catalog(chunked: chunked)
        let data = try CanonicalJSON.encode(expected)
        #expect(String(decoding: data, as: UTF8.self).contains("\"chunked\":{"))
        let fast = try CatalogReader.read(data, file: "catalog.json")
        #expect(fast == expected)
        #expect(fast.bundles.values.first?.chunked == chunked)
        #expect(try JSONDecoder().decode(Catalog.self, from: data) == expected)
    }

    @Test func anAbsentOrNullChunkedFieldIsNil() throws {
        let data = try CanonicalJSON.encode(catalog(chunked: nil))
        #expect(!String(decoding: data, as: UTF8.self).contains("chunked"))
        #expect(try CatalogReader.read(data, file: "catalog.json").bundles.values.first?.chunked == nil)
        let withNull = String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\"files\":1", with: "\"files\":1,\"chunked\":null")
        #expect(try CatalogReader.read(Data(withNull.utf8), file: "catalog.json").bundles.values.first?.chunked == nil)
    }

    @Test func aChunkedFieldWithoutItsHeaderSizeIsRefused() throws {
        let text = String(decoding: try CanonicalJSON.encode(catalog(chunked: nil)), as: UTF8.self)
            .replacingOccurrences(of: "\"files\":1", with: "\"files\":1,\"chunked\":{\"url\":\"x.zck\",\"size\":5,\"headerSHA256\":\"\"}")
        #expect(throws: (any Error).self) { try CatalogReader.read(Data(text.utf8), file: "catalog.json") }
    }
}

/// The chunking parameters in a bundle's `chunked` value (`chunkSize`, `minChunk`, `maxChunk`,
/// `normalization`, `level`): the device cuts
/// and compresses its old files with them, so they are read alike by both readers, optional (a
/// catalog published before they were recorded means the defaults), and refused when hostile.
@Suite struct ChunkedParameterFieldTests {
    static let hex = ChunkedBundleFieldTests.hex

    /// The catalog's text with the bundle's `chunked` value replaced by `chunked`.
    func text(chunked: String) throws -> String {
        String(decoding: try CanonicalJSON.encode(ChunkedBundleFieldTests().catalog(chunked: nil)), as: UTF8.self)
            .replacingOccurrences(of: "\"files\":1", with: "\"files\":1,\"chunked\":\(chunked)")
    }

    func chunked(_ extra: String) -> String {
        "{\"url\":\"x.zck\",\"size\":157,\"headerSize\":147,\"headerSHA256\":\"\(String(repeating: "c", count: 64))\"\(extra)}"
    }

    @Test func bothReadersReadTheParametersAndTheWriterWritesThem() throws {
        let value = ChunkedBundle(
            url: "x.zck", size: 157, headerSize: 147, headerSHA256: String(repeating: "c", count: 64), chunkSize: 32768, minChunk: 8192,
            maxChunk: 131072, normalization: 2, level: 9, sqlitePages: true)
        let expected = ChunkedBundleFieldTests().catalog(chunked: value)
        let data = try CanonicalJSON.encode(expected)
        #expect(String(decoding: data, as: UTF8.self).contains("\"chunkSize\":32768"))
        #expect(String(decoding: data, as: UTF8.self).contains("\"level\":9"))
        #expect(String(decoding: data, as: UTF8.self).contains("\"sqlitePages\":true"))
        #expect(String(decoding: data, as: UTF8.self).contains("\"minChunk\":8192,\"normalization\":2"))
        #expect(try CatalogReader.read(data, file: "catalog.json") == expected)
        #expect(try JSONDecoder().decode(Catalog.self, from: data) == expected)
        #expect(try RegionTree(expected).catalog == expected)
    }

    @Test func absentParametersAreNilAndMeanTheDefaults() throws {
        let data = Data(try text(chunked: chunked("")).utf8)
        for catalog in [try CatalogReader.read(data, file: "catalog.json"), try JSONDecoder().decode(Catalog.self, from: data)] {
            let value = try #require(catalog.bundles.values.first?.chunked)
            #expect(value.chunkSize == nil && value.minChunk == nil && value.maxChunk == nil && value.normalization == nil && value.level == nil)
            #expect(value.sqlitePages == nil && !value.effectiveSQLitePages, "cut by content, as the first publishers did")
            #expect(value.effectiveChunkSize == ChunkedBundle.defaultChunkSize && value.effectiveLevel == ChunkedBundle.defaultLevel)
            // The first publishers' cut: a quarter to eight times the chunk size, not normalized.
            #expect(value.effectiveMinChunk == 2048 && value.effectiveMaxChunk == 65536 && value.effectiveNormalization == 0)
            #expect(throws: Never.self) { try RegionTree(catalog) }
        }
        #expect(!String(decoding: try CanonicalJSON.encode(try CatalogReader.read(data, file: "catalog.json")), as: UTF8.self).contains("chunkSize"))
    }

    /// Hostile values: the catalog is refused, naming the bundle and the field, before any device
    /// would cut its files with them (no crash, no huge allocation).
    @Test(arguments: [
        ("chunkSize", "0"), ("chunkSize", "-8192"), ("chunkSize", "3000"), ("chunkSize", "512"), ("chunkSize", "2097152"),
        ("chunkSize", "4611686018427387904"), ("chunkSize", "-9223372036854775808"), ("level", "0"), ("level", "-5"),
        ("level", "20"), ("level", "9223372036854775807"), ("minChunk", "0"), ("minChunk", "-1"), ("minChunk", "16384"),
        ("maxChunk", "4096"), ("maxChunk", "0"), ("maxChunk", "9223372036854775807"), ("normalization", "-1"), ("normalization", "4"),
    ])
    func hostileParametersAreRefusedNamingBundleAndField(_ field: String, _ value: String) throws {
        let data = Data(try text(chunked: chunked(",\"\(field)\":\(value)")).utf8)
        for catalog in [try CatalogReader.read(data, file: "catalog.json"), try JSONDecoder().decode(Catalog.self, from: data)] {
            let parsed = try #require(catalog.bundles.values.first?.chunked)
            let read = [
                "chunkSize": parsed.chunkSize, "minChunk": parsed.minChunk, "maxChunk": parsed.maxChunk, "normalization": parsed.normalization,
                "level": parsed.level,
            ]
            #expect(read[field] == Int(value))
            do {
                _ = try RegionTree(catalog)
                Issue.record("\(field) \(value) was accepted")
            } catch {
                guard case .invalidChunking(let bundle, let name, _, _) = error else {
                    Issue.record("\(error)")
                    continue
                }
                #expect(bundle == BundleDigest(hex: Self.hex))
                #expect(name == "chunked." + field)
                #expect(error.description.contains("sha256:" + Self.hex) && error.description.contains("chunked.\(field) \(value)"), "\(error)")
            }
        }
    }

    @Test(arguments: [("chunkSize", "8192.5"), ("chunkSize", "\"8192\""), ("level", "6.5"), ("level", "true"), ("chunkSize", "1e400")])
    func nonIntegerParametersAreRefusedByBothReaders(_ field: String, _ value: String) throws {
        let data = Data(try text(chunked: chunked(",\"\(field)\":\(value)")).utf8)
        #expect(throws: (any Error).self) { try CatalogReader.read(data, file: "catalog.json") }
        #expect(throws: (any Error).self) { try JSONDecoder().decode(Catalog.self, from: data) }
    }
}
