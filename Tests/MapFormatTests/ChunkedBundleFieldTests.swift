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
