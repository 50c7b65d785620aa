import Foundation
import MapFetch
import MapFormat
import TestSupport
import Testing

@testable import MapBuild

/// `mappack plan` reads only what it prints of the catalog (`CatalogOutline`): the plan is the
/// one a full read gives, names still select regions, and a broken catalog is refused with the
/// full read's error.
@Suite struct PlanCatalogDetailTests {
    /// The plan of `include` (and `cacheSeed`) over `catalog`, from a full read and from the outline.
    func plans(_ catalog: Catalog, include: String, cacheSeed: String = "[]") throws -> (full: BuildPlan, preview: PlanPreview) {
        let (recipe, cache, folder) = try recipe(catalog, include: include, cacheSeed: cacheSeed)
        defer { withExtendedLifetime(folder) {} }
        return (try BuildPlan.make(recipe: recipe, cache: cache), try BuildPlan.preview(recipe: recipe, cache: cache))
    }

    /// A recipe of `selectors` (and `cacheSeed`) over `catalog` and its download cache, in `folder`
    /// (deleted when the caller lets it go).
    func recipe(_ catalog: Catalog, include: String, cacheSeed: String = "[]") throws -> (Recipe, DownloadCache, folder: TemporaryFolder) {
        let folder = TemporaryFolder("plan-detail")
        try CanonicalJSON.encode(catalog).write(to: URL(fileURLWithPath: folder.join("catalog.json")))
        let recipe = try Recipe.parse(
            Data(
                """
                name: t
                catalog: \(folder.join("catalog.json"))
                language: de
                regions:
                  include: \(include)
                cacheSeed:
                  include: \(cacheSeed)
                """.utf8), file: folder.join("r.yaml"))
        return (recipe, DownloadCache(root: folder.join("cache")), folder)
    }

    /// `preview` shows what the full read's plan holds.
    func expectSamePlan(_ preview: PlanPreview, _ full: BuildPlan) {
        #expect(preview.catalogName == full.tree.catalog.catalog && preview.mapVersion == full.tree.catalog.mapVersion)
        #expect(preview.selection == full.selection)
        #expect(preview.bundles.map(\.digest) == full.bundles.map(\.digest))
        #expect(preview.bundles.map(\.size) == full.bundles.map(\.info.size))
        #expect(preview.bundles.map(\.unpackedSize) == full.bundles.map(\.info.unpackedSize))
        #expect(preview.bundles.map(\.kind) == full.bundles.map(\.info.kind))
        #expect(preview.bundles.map(\.sizeOnDisk) == full.bundles.map(\.info.sizeOnDisk))
        #expect(preview.bundles.map(\.regions) == full.bundles.map(\.regions))
        #expect(preview.bundles.map(\.forStore) == full.bundles.map(\.forStore) && preview.bundles.map(\.cached) == full.bundles.map(\.cached))
        #expect(preview.downloadBytes == full.downloadBytes && preview.sizeOnDisk == full.sizeOnDisk)
        #expect(preview.totalBundleBytes == full.totalBundleBytes && preview.storeBundleBytes == full.storeBundleBytes)
        #expect(preview.seedBundleBytes == full.seedBundleBytes)
        #expect(preview.cacheSeedBytes == full.cacheSeedBytes && preview.capacityOvershoot == full.capacityOvershoot)
        #expect(preview.selectedRegionSizes == full.selectedRegionSizes && preview.selectedRegionDownloadSizes == full.selectedRegionDownloadSizes)
        for index in full.selection.regions.indices {
            let region = full.tree.regions[Int(full.selection.regionPositions[index])]
            let shown = preview.selectedRegion(index)
            #expect(shown.id == region.id && shown.parent == region.parent && shown.bundles == region.bundles)
            #expect(shown.name == region.name(in: "de"))
            #expect(preview.ancestry(region.id) == full.tree.ancestry(region.id))
        }
    }

    /// `BuildPlan.preview`, what `mappack plan` prints, is a `PlanPreview` (not a `BuildPlan` a
    /// build could take) and shows what the full read's plan holds; the full read keeps what the
    /// outline drops.
    @Test func thePreviewShowsWhatTheFullPlanHolds() throws {
        var catalog = BuildPlanTests.catalog()
        catalog.regions[2].cities = ["Bern"]
        catalog.regions[2].center = [46.8, 8.2]
        let (full, preview) = try plans(catalog, include: "[europe/ch, europe/at]", cacheSeed: "[world]")
        expectSamePlan(preview, full)
        #expect(full.tree.regions[2].cities == ["Bern"])
        #expect(full.tree.catalog.bundles.values.allSatisfy { !$0.url.isEmpty })
    }

    /// A name selects a region in any language (and an ambiguous one is refused), so a recipe
    /// that names one reads every name: at once when a selector does not look like an id, after
    /// a first read when it does (`autriche`).
    @Test(arguments: ["[Schweiz]", "[Liechtenstein, europe/at]", "[europe/ch, Austria]", "[autriche]", "[europe/ch, autriche]"])
    func aNameSelectorReadsEveryName(_ include: String) throws {
        var catalog = BuildPlanTests.catalog()
        catalog.regions[7].names["fr"] = "autriche"
        let (full, preview) = try plans(catalog, include: include)
        expectSamePlan(preview, full)
        let (recipe, cache, folder) = try recipe(BuildPlanTests.catalog(), include: "[Bern]")
        defer { withExtendedLifetime(folder) {} }
        #expect { _ = try BuildPlan.make(recipe: recipe, cache: cache) } throws: { "\($0)".contains("matches several regions") }
        #expect { _ = try BuildPlan.preview(recipe: recipe, cache: cache) } throws: { "\($0)".contains("matches several regions") }
    }

    /// A catalog that a build refuses is refused by a plan with the same error.
    @Test(arguments: [
        #""url":"b/2000.tar.zst""# + "\u{1}" + #""url":"../x""#, #""url":"b/2000.tar.zst""# + "\u{1}" + #""url":"b/%2e%2e/x""#,
        #""names":{"en":"Thun"}"# + "\u{1}" + #""names":{}"#, #""names":{"en":"Thun"}"# + "\u{1}" + #""names":{"en":"Thun","en":"T"}"#,
        #""names":{"en":"Thun"}"# + "\u{1}" + #""names":{"en":"Thun"},"cities":[1]"#,
        #""names":{"en":"Thun"}"# + "\u{1}" + #""names":{"en":"Thun"},"center":["x"]"#,
        #""names":{"en":"Thun"}"# + "\u{1}" + #""names":{"en":"Thun"},"released":4"#,
        #""names":{"en":"Thun"}"# + "\u{1}" + #""names":{"fr":1}"#, #""size":5000"# + "\u{1}" + #""size":-5"#,
        #""parent":"europe/ch/be""# + "\u{1}" + #""parent":"europe/ch/nowhere""#,
    ])
    func aRefusedCatalogGivesTheFullReadsError(_ change: String) throws {
        let parts = change.split(separator: "\u{1}").map(String.init)
        let text = String(decoding: try CanonicalJSON.encode(BuildPlanTests.catalog()), as: UTF8.self)
        #expect(text.contains(parts[0]))
        let broken = Data(text.replacingOccurrences(of: parts[0], with: parts[1]).utf8)
        let url = URL(fileURLWithPath: "/catalogs/catalog.json")
        let fullError = #expect(throws: CatalogSource.LoadError.self) { try CatalogSource.decode(broken, url: url) }
        let planError = #expect(throws: CatalogSource.LoadError.self) { try CatalogSource.decodeOutline(broken, url: url, language: "de") }
        #expect(fullError.map { "\($0)" } == planError.map { "\($0)" })
    }
}
