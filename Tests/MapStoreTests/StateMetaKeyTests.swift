import Foundation
import MapFormat
import Testing

@testable import MapStore

@Suite struct StateMetaKeyTests {
    /// The names stores on devices already hold: renaming a case must not rename its row.
    @Test func keysKeepTheirStoredNames() {
        #expect(
            StateMetaKey.allCases.map(\.rawValue) == [
                "format", "imageID", "mapVersion", "language", "installed", "blockSize", "catalog", "offeredManifest", "baseImage", "baseImageID",
                "baseManifest", "signature", "catalogURL", "checkedCatalogURL", "supportedUntil", "keptManifest", "catalogsSchema",
            ])
    }

    /// A pending transition's record keeps its meta rows by stored name; a name this library does not
    /// know (written by a newer one) is left out of the commit rather than failing the repair.
    @Test func transitionRecordCarriesMetaRowsByStoredName() throws {
        var record = TransitionRecord(startingTransition: "update")
        record.meta = [StateMetaKey.installedCatalogURL.rawValue: "https://maps.example.com/catalog.json", "futureKey": "x"]
        let decoded = try JSONDecoder().decode(TransitionRecord.self, from: JSONEncoder().encode(record))
        #expect(decoded.metaRows == [.installedCatalogURL: "https://maps.example.com/catalog.json"])
        #expect(decoded.meta["catalogURL"] == "https://maps.example.com/catalog.json")
    }
}
