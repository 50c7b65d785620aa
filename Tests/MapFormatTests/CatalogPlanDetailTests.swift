import Foundation
import MapFormat
import Testing

/// A compact catalog with every region field, names in several languages (and none in English
/// for one region), and URLs that the plan read must decode to check.
private let catalogJSON =
    #"{"bundles":{"sha256:"# + String(repeating: "a", count: 64)
    + #"":{"files":2,"kind":"tiles","size":10,"sizeOnDisk":{"1024":2048,"4096":4096,"512":1536},"unpackedSize":20,"url":"b/a..b.tar.zst"},"sha256:"#
    + String(repeating: "b", count: 64)
    + #"":{"size":30,"unpackedSize":40,"url":"b/b%41.tar.zst"},"sha256:"# + String(repeating: "c", count: 64)
    + #"":{"kind":"search","size":5,"unpackedSize":6,"url":"b\/c.tar.zst"}},"catalog":"c","format":"mappack-catalog/1","mapVersion":"1.0","regions":["#
    + #"{"bbox":[8.618,33.87,10.868,36.715],"bundles":["sha256:"# + String(repeating: "a", count: 64) + #""],"center":[35.293,-9.743],"#
    + #""cities":["Bern","Zürich"],"id":"world","names":{"de":"Welt","en":"World","ja":"世界","de-CH":"Wält"},"parent":null,"released":"2026-11-20T00:00:00Z"},"#
    + #"{"bundles":["sha256:"# + String(repeating: "b", count: 64) + #"","sha256:"# + String(repeating: "a", count: 64)
    + #""],"cities":null,"id":"world/x","names":{"fr":"Iks","ja":"エックス"},"parent":"world","released":null},"#
    + #"{"bundles":["sha256:"# + String(repeating: "c", count: 64) + #""],"id":"world/y","names":{"\u0065n":"Y","de":"Üpsilon"},"parent":"world"}"#
    + #"],"released":"2026-11-20T00:00:00Z"}"#

/// The tree of `text` read in full, or nil when it is refused.
private func fullTree(_ text: String) -> RegionTree? {
    guard let catalog = try? CatalogReader.read(Data(text.utf8), file: "catalog.json") else { return nil }
    return try? RegionTree(catalog)
}

/// The outline of `text` (a plan read), or nil when it is refused.
private func outline(_ text: String, _ language: String?, allNames: Bool = false) -> CatalogOutline? {
    try? CatalogOutline.read(Data(text.utf8), file: "catalog.json", language: language, allNames: allNames)
}

/// `outline` and `full` agree on what an outline keeps: ids, parents, bundles, the names in `language`.
private func expectSameRegions(_ outline: CatalogOutline, _ full: RegionTree, language: String?) {
    let positions = (0..<Int32(full.regions.count))
    #expect(outline.regionCount == full.regions.count)
    #expect(positions.map { outline.region(at: $0).id } == full.regions.map(\.id))
    #expect(positions.map { outline.regionID(at: $0) } == full.regions.map(\.id))
    #expect(positions.map { outline.region(at: $0).parent } == full.regions.map(\.parent))
    #expect(positions.map { outline.region(at: $0).bundles } == full.regions.map(\.bundles))
    #expect(positions.map { outline.region(at: $0).name(in: language) } == full.regions.map { $0.name(in: language) })
}

@Suite struct CatalogPlanDetailTests {
    static let languages: [String?] = [nil, "en", "de", "de-CH", "de_AT", "ja", "fr", "xx", "K", "\u{212A}", "é"]

    /// A plan read keeps what a plan prints and equals the full read there: ids, parents, bundles,
    /// the name in the plan's language, every bundle field but the URL, the tree's warnings. What
    /// it drops (URLs, centres, boxes, cities, release times) has no accessor in `CatalogOutline`.
    @Test(arguments: languages)
    func aPlanReadKeepsWhatAPlanPrints(_ language: String?) throws {
        let full = try #require(fullTree(catalogJSON))
        let plan = try #require(outline(catalogJSON, language))
        expectSameRegions(plan, full, language: language)
        #expect(plan.roots == full.roots && plan.bundleDigests == full.bundleDigests && plan.parentPositions == full.parentPositions)
        #expect(plan.warnings.map { "\($0)" } == full.warnings.map { "\($0)" })
        #expect(plan.catalogName == full.catalog.catalog && plan.mapVersion == full.catalog.mapVersion)
        #expect(plan.language == language && !plan.allNames)
        #expect(full.catalog.regions[0].cities == ["Bern", "Zürich"])
    }

    @Test func aPlanReadWithAllNamesKeepsEveryName() throws {
        let full = try #require(fullTree(catalogJSON))
        let plan = try #require(outline(catalogJSON, "de", allNames: true))
        #expect(plan.allNames)
        for language in Self.languages { expectSameRegions(plan, full, language: language) }
        // Without every name, a name in another language selects nothing.
        let light = try #require(outline(catalogJSON, "de"))
        #expect((try? light.resolve(include: [RegionSelector("世界")], exclude: [])) == nil)
        #expect((try? plan.resolve(include: [RegionSelector("世界")], exclude: []))?.regions.first?.id == RegionID("world"))
    }

    /// The outline of a full read's tree (what `CatalogSource.decodeOutline` falls back to) is the
    /// outline a plan read gives.
    @Test func theOutlineOfAFullTreeIsTheOutlineOfAPlanRead() throws {
        let full = try #require(fullTree(catalogJSON))
        expectSameRegions(CatalogOutline(full, language: "de"), full, language: "de")
    }

    @Test func candidatesAreTheTagsPickTries() {
        #expect(LocalizedNames.candidates(language: "de-CH_x") == ["de-CH_x", "de-CH", "de", "en"])
        #expect(LocalizedNames.candidates(language: nil) == ["en"])
    }

    /// Whatever a full read (with `RegionTree`) refuses, a plan read refuses too, in the fields it
    /// does not keep as much as in those it does; and it accepts the valid shapes a full read
    /// accepts (a plan that always fell back to a full read would gain nothing).
    @Test(arguments: [
        (#""url":"b/b%41.tar.zst""#, #""url":"""#), (#""url":"b/b%41.tar.zst""#, #""url":"../b.tar.zst""#),
        (#""url":"b/b%41.tar.zst""#, #""url":"b/%2e%2e/x""#), (#""url":"b/b%41.tar.zst""#, #""url":"b/%zz""#),
        (#""url":"b/b%41.tar.zst""#, #""url":"b/..""#), (#""url":"b/b%41.tar.zst""#, #""url":"b/\u002e./x""#),
        (#""url":"b/b%41.tar.zst""#, #""url":5"#), (#""url":"b/b%41.tar.zst""#, #""url":"a\u0001""#),
        (#""url":"b/b%41.tar.zst""#, #""url":"b/..?x""#), (#""url":"b/b%41.tar.zst""#, #""url":"b/x?..""#),
        (#""url":"b/b%41.tar.zst""#, #""url":"b/x%3F/%2E%2E""#), (#""url":"b/b%41.tar.zst""#, #""url":"b/x\\..\\y""#),
        ("[35.293,-9.743]", #"["x"]"#), ("[35.293,-9.743]", "[1e999]"), ("[35.293,-9.743]", "[1,]"), ("[35.293,-9.743]", "5"),
        ("[35.293,-9.743]", "[1e3, -0.5]"), ("[35.293,-9.743]", "null"), ("[35.293,-9.743]", "[]"),
        (#"["Bern","Zürich"]"#, "[1]"), (#"["Bern","Zürich"]"#, #""Bern""#), (#"["Bern","Zürich"]"#, #"["a\x"]"#),
        (#"["Bern","Zürich"]"#, #"["\ud800"]"#), (#"["Bern","Zürich"]"#, #"[ "a" , "b\n" ]"#), (#"["Bern","Zürich"]"#, "[]"),
        (#""released":null"#, #""released":5"#), (#""released":null"#, #""released":"x\u00e9""#), (#""released":null"#, #""released":[]"#),
        (#""fr":"Iks""#, #""fr":1"#), (#""fr":"Iks""#, #""fr":"Iks","ja":"x""#), (#""fr":"Iks""#, #""ja":"x","fr":"Iks""#),
        (#""fr":"Iks""#, #""f\u0072":"Iks","fr":"x""#), (#""fr":"Iks""#, #""K":"a","\u212A":"b""#), (#""fr":"Iks""#, #""\u212A":"a""#),
        (#""fr":"Iks""#, "\"é\":\"a\",\"e\u{301}\":\"b\""), (#""fr":"Iks""#, "\"é\":\"a\",\"K\":\"b\""),
        (#""fr":"Iks""#, #""fr":"\q""#), (#""fr":"Iks""#, #""de":"Iks""#),
        (#"{"fr":"Iks","ja":"エックス"}"#, "{}"), (#"{"fr":"Iks","ja":"エックス"}"#, "[]"), (#"{"fr":"Iks","ja":"エックス"}"#, "null"),
        (#"{"fr":"Iks","ja":"エックス"}"#, #"{"en":"A","en":"B"}"#), (#""de":"Üpsilon""#, #""de":"Üpsilon","de":"Ü""#),
        (#""\u0065n":"Y""#, #""\u0065n":"Y","en":"Z""#), (#""de":"Welt""#, #""de":"Welt","x":"\u0000""#),
        (#""size":30"#, #""size":-30"#), (#""size":30"#, #""size":"30""#), (#""id":"world/x""#, #""id":"world/../x""#),
        (#""parent":"world","released""#, #""parent":"nowhere","released""#), (#""kind":"search""#, #""kind":7"#),
    ])
    func aPlanReadRefusesWhatAFullReadRefuses(_ replace: String, _ with: String) throws {
        let text = catalogJSON.replacingOccurrences(of: replace, with: with)
        #expect(text != catalogJSON)
        let full = fullTree(text)
        for language in Self.languages {
            let plan = outline(text, language)
            if full == nil { #expect(plan == nil, "a plan read in \(language ?? "nil") accepts what a full read refuses") }
            if let plan, let full { expectSameRegions(plan, full, language: language) }
        }
        // Valid shapes that need no second look are accepted by the plan read itself.
        if full != nil, !with.contains("\\u"), !with.contains("..") && !with.contains("%") {
            #expect(outline(text, "de") != nil)
        }
    }

    /// A bundle's number finds its entry, and the outline's bundle is the entry but its URL.
    @Test func bundleNumbersFindTheirEntries() throws {
        let full = try #require(fullTree(catalogJSON))
        let plan = try #require(outline(catalogJSON, "de"))
        for (number, digest) in full.bundleDigests.enumerated() {
            let info = try #require(full.catalog.bundles[digest])
            #expect(full.bundleInfo(number: Int32(number)) == info)
            let kept = plan.bundle(number: Int32(number))
            #expect(kept.size == info.size && kept.unpackedSize == info.unpackedSize && kept.kind == info.kind && kept.sizeOnDisk == info.sizeOnDisk)
            #expect(kept.sizeOnDisk(blockSize: 4096) == info.sizeOnDisk(blockSize: 4096))
        }
    }

    /// Size tables: a repeated block size is refused whether it is a power of two (found by its
    /// bit) or not (found by comparing), and distinct ones of both kinds are read.
    @Test(arguments: [
        (#""3000":1,"4096":2,"512":3,"1":4,"3":5"#, true), (#""3000":1,"4096":2,"3000":3"#, false),
        (#""512":1,"3000":2,"512":3"#, false), (#""1":1,"2":2,"1":3"#, false), (#""0":1,"1":2"#, true),
    ])
    func sizeTablesRefuseARepeatedBlockSize(_ table: String, _ accepted: Bool) {
        let text = catalogJSON.replacingOccurrences(of: #""1024":2048,"4096":4096,"512":1536"#, with: table)
        #expect(text != catalogJSON)
        let read = try? CatalogReader.read(Data(text.utf8), file: "catalog.json")
        #expect((read != nil) == accepted)
        if let read {
            let bundle = read.bundles[BundleDigest(hex: String(repeating: "a", count: 64))]
            #expect(bundle?.sizeOnDisk(blockSize: 3000) == 1 && bundle?.sizeOnDisk(blockSize: 512) == 3 || table.hasPrefix(#""0""#))
        }
    }

    /// Digests sort by buckets of their first 16 bits: evenly spread ones, a few sharing a bucket
    /// (sorted in place), many sharing one (a crafted catalog), and small lists.
    @Test(arguments: [0, 1, 3, 40, 5000])
    func digestsSortAsTheStandardSortSortsThem(_ sharing: Int) {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state
        }
        for count in [0, 1, 200, 257, 6000] {
            let keyed = (0..<count).map { index -> (digest: BundleDigest, entry: Int) in
                let first = index < sharing ? (0xABCD << 48) | (next() >> 16) : next()
                // Some equal digests too, which keep their order in neither sort (only the digests are compared).
                return (BundleDigest(sha256: SHA256Digest(words: first, index % 7 == 0 ? 0 : next(), next(), next())), index)
            }
            let sorted = RegionTree.sortedByDigest(keyed)
            #expect(sorted.map(\.digest) == keyed.map(\.digest).sorted())
            #expect(Set(sorted.map(\.entry)) == Set(0..<count) && sorted.count == count)
            #expect(sorted.allSatisfy { keyed[$0.entry].digest == $0.digest })
        }
    }

    @Test func everyTruncationIsRefused() {
        for length in 0..<catalogJSON.utf8.count {
            #expect(outline(String(decoding: catalogJSON.utf8.prefix(length), as: UTF8.self), "de") == nil, "prefix of \(length) bytes")
        }
    }

    @Test func urlsThatNeedNoDecodingAreTheOnlyOnesTakenOnTheirBytes() {
        for (url, plain) in [
            ("b/a.tar.zst", true), ("b/a.b.c", true), ("", false), ("b/a..b", false), ("a%41", false), ("..", false), (".", true),
        ] {
            #expect(unsafe Array(url.utf8).withUnsafeBytes { unsafe RegionTree.urlIsPlainlySafe($0.bytes) } == plain, "\(url)")
            if plain { #expect(!RegionTree.urlProblem(url)) }
        }
    }
}
