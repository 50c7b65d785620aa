import Foundation
import MapFormat
import MapStore
import Testing

/// Issue 46: a `MapStoreError` carries the URL it names as a `URL` and spells it in its message one
/// way, wherever it was thrown: a file by its path, any other URL whole.
@Suite struct ErrorURLTests {
    static let file = URL(fileURLWithPath: "/x/catalog.json")
    static let served = URL(string: "https://h/maps/catalog.json")!

    /// Every case that names a catalog or a server's URL, built for `url`.
    static func namingCases(_ url: URL) -> [MapStoreError] {
        [
            .remote(url: url, httpStatus: 503, regions: [], bundle: nil, reason: "HTTP status 503"),
            .invalidCatalog(url: url, reason: .content("bad")),
            .invalidCatalog(url: url, reason: .compressedCopy("short")),
            .catalogUnsigned(url: url),
            .catalogSignatureInvalid(url: url, reason: "edited"),
            .catalogRollback(url: url, seen: 3, offered: 2),
            .catalogMixAndMatch(url: url, version: 3),
            .catalogExpired(url: url, expires: "2026-01-01T00:00:00Z"),
            .catalogOtherLineage(url: url, following: "a", offered: "b"),
            .catalogResetRefused(url: url, reason: "no cosignature"),
            .catalogTimestampStale(url: url, seen: 3, offered: 2),
            .catalogTimestampReplayed(url: url, seen: 3, offered: 2),
            .catalogTimestampExpired(url: url, expires: "2026-01-01T00:00:00Z"),
            .catalogTimestampMismatch(url: url, reason: "sha256"),
            .catalogTimestampMissing(url: url),
        ]
    }

    @Test(arguments: 0..<15) func aFileIsNamedByItsPath(index: Int) {
        let message = Self.namingCases(Self.file)[index].description
        #expect(message.contains("/x/catalog.json") && !message.contains("file:"), "\(message)")
    }

    @Test(arguments: 0..<15) func aServedURLIsNamedWhole(index: Int) {
        let message = Self.namingCases(Self.served)[index].description
        #expect(message.contains("https://h/maps/catalog.json"), "\(message)")
    }

    /// The messages that tell a person to add a catalog name it by its whole URL, a file's too, as
    /// they always have.
    @Test func catalogsToAddKeepTheirWholeURL() {
        let unknown = MapStoreError.unknownCatalog(catalog: "japan", url: Self.file, catalogs: ["demo-world"])
        #expect(unknown.description.hasPrefix("the catalog at file:///x/catalog.json is 'japan', which is not one of this store's catalogs"))
        let added = MapStoreError.catalogAlreadyAdded(catalog: "japan", url: Self.file)
        #expect(added.description.hasPrefix("the catalog at file:///x/catalog.json is 'japan', which this store has already"))
    }

    /// A refusal reads the same whichever check refused it: the signature's and the timestamp's name
    /// a file catalog alike.
    @Test func aRefusalSpellsItsURLAsItsMessageDoes() {
        let message = MapStoreError.catalogUnsigned(url: Self.file).description
        #expect(message == "catalog /x/catalog.json: \(CatalogTrustError.unsigned)")
    }
}
