import Foundation
import MapBuild
import MapFormat
import MapStore
import Testing

@testable import mappack

/// Issue 46 item 1: the exit code comes from each error's `FailureCategory`, declared beside the error,
/// never from its text. Codes are those the CLI gave before (2 bad input, 1 failed work).
@Suite struct ExitCodeTests {
    static var cases: [(error: any Error, code: Int32, what: String)] {
        [
            (UsageError(message: "unknown option"), 2, "a command line"),
            (ImportError.unreadable(file: "a.geojson", reason: "no such file"), 2, "an import input"),
            (ImportError.failed(reason: "disk"), 1, "an import that failed"),
            (CatalogSource.LoadError.unreadable(url: URL(string: "https://h/catalog.json")!, reason: "503"), 2, "a catalog outside a plan"),
            (PlanError.catalog(.unreadable(url: URL(string: "https://h/catalog.json")!, reason: "503")), 1, "a server's catalog in a plan"),
            (PlanError.catalog(.unreadable(url: URL(fileURLWithPath: "/x/catalog.json"), reason: "no such file")), 2, "a catalog file in a plan"),
            (PlanError.catalog(.ledger(path: "/c/catalog-trust/lineage-0.json", reason: "damaged")), 2, "a damaged trust ledger in a plan"),
            (MapStoreError.catalogUnsigned(url: URL(fileURLWithPath: "/x/catalog.json")), 1, "a store's unsigned catalog file"),
            (PlanError.capacityExceeded(needed: 2, capacity: 1, file: "r.yaml"), 1, "a plan beyond the capacity"),
            (BuildError.plan(.capacityExceeded(needed: 2, capacity: 1, file: "r.yaml")), 1, "a build's plan"),
            (BuildError.output("rename failed"), 1, "a build's output"),
            (MapStoreError.invalidCatalog(url: URL(string: "file:///x/catalog.json")!, reason: .content("bad")), 2, "a store's catalog file"),
            (
                MapStoreError.invalidCatalog(url: URL(fileURLWithPath: "/x/catalog.json.zst"), reason: .compressedCopy("bad")), 2,
                "a catalog file's copy"
            ),
            (MapStoreError.invalidCatalog(url: URL(string: "https://h/catalog.json")!, reason: .content("bad")), 1, "a store's served catalog"),
            (MapStoreError.noCatalogURL, 2, "a store without a catalog URL"),
            (MapStoreError.busy(operation: "update", reason: "another writer"), 1, "a busy store"),
            (CocoaError(.fileNoSuchFile), 1, "an error without a category"),
        ]
    }

    @Test(arguments: 0..<17) func exitCodeComesFromTheCategory(index: Int) {
        let (error, code, what) = Self.cases[index]
        #expect(Mappack.exitCode(for: error).rawValue == code, "\(what): \(error)")
    }

    /// `invalidCatalog` carries its catalog as a `URL` and names it as every store error does
    /// (`URL.shown`): a file, the catalog or its compressed copy, by its path, a served one whole.
    @Test func anUnusableCatalogIsNamedLikeAnyURL() {
        let file = MapStoreError.invalidCatalog(url: URL(fileURLWithPath: "/x/catalog.json"), reason: .content("bad"))
        #expect(file.description == "/x/catalog.json is not a usable catalog: bad; fix or replace the catalog (the store kept its previous one)")
        let copy = MapStoreError.invalidCatalog(url: URL(fileURLWithPath: "/x/catalog.json.zst"), reason: .compressedCopy("short"))
        #expect(copy.description.hasPrefix("/x/catalog.json.zst is not a usable catalog: short;"))
        let served = MapStoreError.invalidCatalog(url: URL(string: "https://h/catalog.json.zst")!, reason: .compressedCopy("short"))
        #expect(served.description.hasPrefix("https://h/catalog.json.zst is not a usable catalog: short;"))
    }

    /// A build's catalog errors carry the `URL` they name and spell it as `URL.shown`, whichever step
    /// failed; the trust ledger's files are named by their paths.
    @Test func aBuildCatalogErrorNamesAFileByItsPath() {
        let file = URL(fileURLWithPath: "/x/catalog.json")
        let format = CatalogSource.LoadError.invalid(url: file, .format(.unknown(found: "mappack-catalog/9", expected: Catalog.formatTag)))
        #expect(format.description.hasPrefix("catalog /x/catalog.json: "), "\(format)")
        let served = CatalogSource.LoadError.unreadable(url: URL(string: "https://h/catalog.json")!, reason: "HTTP status 503")
        #expect(served.description == "catalog https://h/catalog.json: HTTP status 503")
        let ledger = CatalogSource.LoadError.ledger(path: "/c/catalog-trust/lineage-0.json", reason: "damaged")
        #expect(ledger.description == "catalog /c/catalog-trust/lineage-0.json: damaged")
    }
}
