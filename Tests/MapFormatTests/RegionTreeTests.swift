import Foundation
import MapFormat
import Testing

/// A catalog small enough to read: two roots, three levels under Europe, a shared bundle.
func sampleCatalog(mutate: (inout Catalog) -> Void = { _ in }) -> Catalog {
    func digest(_ n: Int) -> BundleDigest { BundleDigest(hex: String(repeating: String(n), count: 64)) }
    func bundle(_ size: Int64, onDisk: Int64) -> BundleInfo {
        BundleInfo(url: "b/\(size).tar.zst", size: size, unpackedSize: size * 2, files: 1, kind: "tiles", sizeOnDisk: ["4096": onDisk])
    }
    var catalog = Catalog(
        catalog: "c", mapVersion: MapVersion("1.0"), released: nil,
        regions: [
            CatalogRegion(id: "world", parent: nil, names: ["en": "World"], bundles: [digest(1)]),
            CatalogRegion(id: "europe", parent: nil, names: ["en": "Europe", "de": "Europa"], bundles: [digest(2)]),
            CatalogRegion(id: "europe/ch", parent: "europe", names: ["en": "Switzerland", "de": "Schweiz", "fr": "Suisse"], bundles: [digest(3)]),
            CatalogRegion(id: "europe/ch/be", parent: "europe/ch", names: ["en": "Bern"], bundles: [digest(4), digest(6)]),
            CatalogRegion(id: "europe/ch/be/thun", parent: "europe/ch/be", names: ["en": "Thun"], bundles: [digest(5)]),
            CatalogRegion(id: "europe/ch/zh", parent: "europe/ch", names: ["en": "Zurich", "de": "Zürich"], bundles: [digest(7), digest(6)]),
            CatalogRegion(id: "europe/li", parent: "europe", names: ["en": "Liechtenstein"], bundles: [digest(8)]),
            CatalogRegion(id: "europe/at", parent: "europe", names: ["en": "Austria", "de": "Österreich"], bundles: [digest(9)]),
            CatalogRegion(id: "europe/at/be", parent: "europe/at", names: ["en": "Bern"], bundles: [digest(9)]),
        ], bundles: Dictionary(uniqueKeysWithValues: (1...9).map { (digest($0), bundle(Int64($0) * 1000, onDisk: Int64($0) * 4096)) }))
    mutate(&catalog)
    return catalog
}

@Suite struct RegionResolutionTests {
    let tree = try! RegionTree(sampleCatalog())

    struct Case: Sendable, CustomTestStringConvertible {
        let include: [String]
        let exclude: [String]
        let regions: [String]
        var testDescription: String { "include \(include) exclude \(exclude)" }
    }

    @Test(arguments: [
        Case(include: ["europe/ch"], exclude: [], regions: ["europe/ch", "europe/ch/be", "europe/ch/be/thun", "europe/ch/zh"]),
        Case(include: ["europe/ch"], exclude: ["europe/ch/be"], regions: ["europe/ch", "europe/ch/zh"]),
        Case(include: ["europe/ch", "europe/ch/zh"], exclude: [], regions: ["europe/ch", "europe/ch/be", "europe/ch/be/thun", "europe/ch/zh"]),
        Case(include: ["Schweiz"], exclude: ["Thun"], regions: ["europe/ch", "europe/ch/be", "europe/ch/zh"]),
        Case(
            include: ["Suisse", "Liechtenstein"], exclude: [],
            regions: ["europe/ch", "europe/ch/be", "europe/ch/be/thun", "europe/ch/zh", "europe/li"]),
        Case(include: ["Österreich"], exclude: [], regions: ["europe/at", "europe/at/be"]),
    ])
    func resolvesIncludesAndExcludes(_ testCase: Case) throws {
        let selection = try tree.resolve(include: testCase.include.map { RegionSelector($0) }, exclude: testCase.exclude.map { RegionSelector($0) })
        #expect(selection.regions.map(\.id.rawValue) == testCase.regions)
    }

    @Test func sharedBundleIsCountedOnce() throws {
        let selection = try tree.resolve(include: [RegionSelector("europe/ch")], exclude: [])
        let shared = BundleDigest(hex: String(repeating: "6", count: 64))
        #expect(selection.bundles.filter { $0 == shared }.count == 1)
        #expect(selection.bundles.count == 5)
        let expected: Int64 = (3 + 4 + 5 + 6 + 7) * 4096
        let size = try #require(tree.sizeOnDisk(Set(selection.bundles), blockSize: 4096))
        #expect(size == expected)
    }

    @Test func remembersWhichIncludeBroughtEachRegion() throws {
        let selection = try tree.resolve(include: [RegionSelector("europe/ch/zh"), RegionSelector("europe/ch")], exclude: [])
        let by = Dictionary(uniqueKeysWithValues: selection.regions.map { ($0.id.rawValue, $0.broughtBy.rawValue) })
        #expect(by["europe/ch/zh"] == "europe/ch/zh")
        #expect(by["europe/ch/be/thun"] == "europe/ch")
    }

    @Test func ambiguousNameListsEveryMatch() {
        #expect {
            _ = try tree.resolve(include: [RegionSelector("Bern", location: "r.yaml:4:3")], exclude: [])
        } throws: { error in
            let text = "\(error)"
            return text.contains("europe/at/be") && text.contains("europe/ch/be") && text.contains("r.yaml:4:3")
        }
    }

    @Test func unknownIDSuggestsClosestIDs() {
        #expect {
            _ = try tree.resolve(include: [RegionSelector("europe/cj", location: "r.yaml:7:5")], exclude: [])
        } throws: { error in
            "\(error)".contains("did you mean 'europe/ch'") && "\(error)".hasPrefix("r.yaml:7:5")
        }
    }
}

@Suite struct CatalogValidationTests {
    static let bad: [(String, @Sendable (inout Catalog) -> Void, String)] = [
        ("duplicate id", { $0.regions.append($0.regions[2]) }, "europe/ch"),
        ("unknown parent", { $0.regions[6].parent = "europe/xx" }, "europe/xx"),
        ("parent cycle", { $0.regions[1].parent = "europe/ch/be" }, "europe/ch/be"),
        ("missing bundle", { $0.regions[6].bundles.append(BundleDigest(hex: String(repeating: "f", count: 64))) }, "europe/li"),
        ("unknown format major", { $0.format = "mappack-catalog/2" }, "mappack-catalog/2"),
        ("negative size", { $0.bundles[BundleDigest(hex: String(repeating: "1", count: 64))]!.size = -5 }, "sha256:1111"),
        ("no names", { $0.regions[6].names = [:] }, "europe/li"),
    ]

    @Test(arguments: 0..<bad.count)
    func refusesInvalidCatalogNamingTheOffender(_ index: Int) {
        let (_, mutate, needle) = CatalogValidationTests.bad[index]
        #expect {
            _ = try RegionTree(sampleCatalog(mutate: mutate))
        } throws: { error in
            "\(error)".contains(needle)
        }
    }

    @Test func warnsAboutUnreferencedBundle() throws {
        let orphan = BundleDigest(hex: String(repeating: "a", count: 64))
        let tree = try RegionTree(sampleCatalog { $0.bundles[orphan] = BundleInfo(url: "x", size: 1, unpackedSize: 1, files: 1, kind: nil) })
        #expect(tree.warnings == [.unreferencedBundle(orphan)])
    }

    @Test func decodingIgnoresUnknownKeysButNeedsRequiredOnes() throws {
        var json = String(decoding: try CanonicalJSON.encode(sampleCatalog()), as: UTF8.self)
        json = json.replacingOccurrences(of: "\"catalog\":\"c\"", with: "\"catalog\":\"c\",\"futureField\":{\"x\":1}")
        #expect(try CanonicalJSON.decode(Catalog.self, from: Data(json.utf8), file: "catalog.json").catalog == "c")
        let broken = json.replacingOccurrences(of: "\"mapVersion\"", with: "\"mapVersionX\"")
        #expect { _ = try CanonicalJSON.decode(Catalog.self, from: Data(broken.utf8), file: "catalog.json") } throws: {
            "\($0)".contains("mapVersion")
        }
    }
}

@Suite struct SmallFormatTests {
    @Test(arguments: [(Int64(0), Int64(0)), (1, 4096), (4096, 4096), (4097, 8192)])
    func sizeOnDiskRoundsUpToBlocks(_ size: Int64, _ expected: Int64) {
        #expect(SizeOnDisk.allocated(size: size, blockSize: 4096) == expected)
    }

    @Test func localizedNamesFallBack() {
        let names = ["en": "Switzerland", "de": "Schweiz"]
        #expect(LocalizedNames.pick(names, language: "de-CH", fallback: "id") == "Schweiz")
        #expect(LocalizedNames.pick(names, language: "fr", fallback: "id") == "Switzerland")
        #expect(LocalizedNames.pick(["ru": "x"], language: "fr", fallback: "europe/ch") == "europe/ch")
    }

    @Test func byteCountsParseBinaryUnits() {
        #expect(ByteCount.parse("64 MiB") == 64 << 20)
        #expect(ByteCount.parse("32GiB") == 32 << 30)
        #expect(ByteCount.parse("lots") == nil)
    }

    @Test func mapVersionsCompareNumerically() {
        #expect(MapVersion("2026.9.0") < MapVersion("2026.11.0"))
    }
}

@Suite struct ManifestSealingTests {
    func manifest(paths: [String]) -> ImageManifest {
        let digest = BundleDigest(hex: String(repeating: "c", count: 64))
        let files = paths.enumerated().map {
            ImageFile(
                path: try! StorePath(validating: $0.element), size: Int64($0.offset * 1000),
                sha256: SHA256Digest(hex: String(repeating: "d", count: 64))!, bundle: digest)
        }
        return ImageManifest(
            name: "n", catalog: "c", mapVersion: MapVersion("1.0"), built: "2026-11-20T00:00:00Z", mappackVersion: "0.1.0",
            blockSize: 4096, language: "de",
            regions: [
                ImageRegion(
                    id: "europe/ch", parent: "europe", name: "Schweiz", names: ["de": "Schweiz", "ja": "スイス"],
                    bundles: [digest], sizeOnDiskInBytes: 4096, center: [46.8, 8.2], cities: ["Zürich"])
            ],
            bundles: [ImageBundle(digest: digest, size: 10, url: "bundles/cc/x.tar.zst", files: files.count, unpackedSize: 5)],
            files: files, cacheSeed: nil)
    }

    @Test(arguments: [["regions/ch/tiles.db", "regions/ch/zürich/ルート.rt", "a/b c/d"], ["quote\"d", "tab\tbed"], []])
    func sealedBytesAreJSONEncodersBytes(_ paths: [String]) throws {
        var sample = manifest(paths: paths)
        let (id, bytes) = try sample.sealed(hash: { String($0.count) })
        #expect(id == String(try sample.bytesForID().count))
        sample.imageID = id
        #expect(bytes == (try CanonicalJSON.encode(sample)))
    }
}
