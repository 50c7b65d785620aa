import Foundation
import MapFormat
import MapStore
import TestSupport
import Testing

/// One language fallback for installed and offered regions (issue 31): a region is called the same in
/// `regions(language:)`, `regionDetails(_:language:)` and `availableRegions(language:)`.
@Suite struct RegionNameTests {
    @Test(arguments: [nil, "de", "de-CH", "fr", "it", "en"] as [String?])
    func installedAndOfferedRegionsShareOneNameRule(language: String?) async throws {
        _ = try await offPool { StoreFixture.shared }
        let device = Device()
        let store = try await device.open(catalog: URL(fileURLWithPath: DownloadTests.catalogFolder + "/catalog.json"))
        for region in try store.regions(language: language) {
            #expect(try store.regionDetails(region.id, language: language).name == region.name, "\(region.id) in \(language ?? "no language")")
        }
        // The rule: the language asked for (then its base), the image's language (de), English, the id.
        let names = Dictionary(uniqueKeysWithValues: try store.regions(language: language).map { ($0.id, $0.name) })
        let offered = Dictionary(uniqueKeysWithValues: try store.availableRegions(language: language).map { ($0.id, $0.name) })
        switch language {
        case "fr":
            #expect(names["europe/ch"] == "Suisse" && names["europe/ch/zh"] == "Zürich" && names["europe/ch/be/thun"] == "Thun")
            #expect(offered["europe"] == "Europe" && offered["world"] == "Welt" && offered["europe/li"] == "Liechtenstein")
        case "en":
            #expect(names["europe/ch/zh"] == "Zurich" && offered["world"] == "World")
        default:
            #expect(names["europe/ch/zh"] == "Zürich" && names["europe/ch/be/thun"] == "Thun")
            #expect(offered["world"] == "Welt" && offered["europe/li"] == "Liechtenstein")
        }
    }
}
