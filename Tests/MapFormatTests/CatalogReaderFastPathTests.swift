import Foundation
import MapFormat
import Testing

/// A compact catalog (no whitespace: the shape the reader's fast paths take) using every field.
private let compactJSON =
    #"{"bundles":{"sha256:"# + String(repeating: "a", count: 64)
    + #"":{"files":2,"kind":"tiles","size":10,"sizeOnDisk":{"1024":2048,"16384":16384,"4096":4096,"512":1536},"unpackedSize":20,"url":"b/a.tar.zst"},"sha256:"#
    + String(repeating: "b", count: 64)
    + #"":{"size":30,"unpackedSize":40,"url":"b/b.tar.zst"}},"catalog":"c","format":"mappack-catalog/1","mapVersion":"1.0","regions":["#
    + #"{"bbox":[8.618,33.87,10.868,36.715],"bundles":["sha256:"# + String(repeating: "a", count: 64) + #""],"center":[35.293,-9.743],"#
    + #""cities":["Bern","Zürich"],"id":"world","names":{"de":"Welt","en":"World","ja":"世界"},"parent":null,"released":"2026-11-20T00:00:00Z"},"#
    + #"{"bundles":["sha256:"# + String(repeating: "b", count: 64) + #"","sha256:"# + String(repeating: "a", count: 64)
    + #""],"id":"world/x","names":{"en":"X"},"parent":"world","released":"2026-11-20T00:00:00Z"}],"released":"2026-11-20T00:00:00Z"}"#

/// `text` with a space after every `{`, `[`, `:` and `,` outside strings: the same JSON, which
/// every fast path refuses, so the reader takes its general paths throughout.
private func spaced(_ text: String) -> String {
    var out = ""
    var inString = false
    var escaped = false
    for character in text {
        out.append(character)
        if inString {
            if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { inString = false }
        } else if character == "\"" {
            inString = true
        } else if "{[:,".contains(character) {
            out.append(" ")
        }
    }
    return out
}

/// The catalog, or the error's reason and path (line and column move with the spacing). Compared
/// as values: a catalog's text would list dictionary keys in an order that differs between two
/// equal dictionaries.
private enum Outcome: Equatable {
    case catalog(Catalog)
    case failure(String)
}

private func outcome(_ text: String) -> Outcome {
    do {
        return .catalog(try CatalogReader.read(Data(text.utf8), file: "catalog.json"))
    } catch let error as JSONFileError {
        return .failure("error at \(error.codingPath): \(error.reason)")
    } catch {
        return .failure("error: \(error)")
    }
}

@Suite struct CatalogReaderFastPathTests {
    @Test func compactAndSpacedCatalogsReadTheSame() throws {
        #expect(spaced(compactJSON) != compactJSON)
        let compact = try CatalogReader.read(Data(compactJSON.utf8), file: "catalog.json")
        #expect(compact == (try CatalogReader.read(Data(spaced(compactJSON).utf8), file: "catalog.json")))
        #expect(compact == (try JSONDecoder().decode(Catalog.self, from: Data(compactJSON.utf8))))
        let bundle = try #require(compact.bundles[BundleDigest(hex: String(repeating: "a", count: 64))])
        #expect(bundle.sizeOnDisk?.blockSizes == [512, 1024, 4096, 16384])
        #expect(bundle.sizeOnDisk(blockSize: 16384) == 16384 && bundle.sizeOnDisk(blockSize: 8192) == nil)
        #expect(compact.regions[0].center == [35.293, -9.743] && compact.regions[0].bbox == [8.618, 33.87, 10.868, 36.715])
    }

    struct Variant: Sendable, CustomTestStringConvertible {
        let replace: String
        let with: String
        /// False for a repeated key, where the reader keeps the last value and JSONDecoder may not.
        var likeJSONDecoder = true
        var testDescription: String { "\(replace) → \(with)" }
    }

    /// Shapes at the edges of each fast path: each must read as it does the general way (the
    /// spaced text), and, unless a key repeats, as `JSONDecoder` reads it whenever the reader
    /// accepts it.
    @Test(arguments: [
        // Size tables: keys and values the fast path leaves to the general one.
        Variant(replace: #""4096":4096"#, with: #""+4096":4096"#), Variant(replace: #""4096":4096"#, with: #""04096":4096"#),
        Variant(replace: #""4096":4096"#, with: #""-4096":4096"#), Variant(replace: #""4096":4096"#, with: #""4096":4096,"4096":1"#),
        Variant(replace: #""4096":4096"#, with: #""1024":1"#), Variant(replace: #""4096":4096"#, with: #""x":1"#),
        Variant(replace: #""4096":4096"#, with: #""999999999999999999":1"#), Variant(replace: #""4096":4096"#, with: #""9999999999999999999":1"#),
        Variant(replace: #""4096":4096"#, with: #""4096":0"#), Variant(replace: #""4096":4096"#, with: #""4096":-0"#),
        Variant(replace: #""4096":4096"#, with: #""4096":1e3"#), Variant(replace: #""4096":4096"#, with: #""4096":2.0"#),
        Variant(replace: #""4096":4096"#, with: #""4096":012"#), Variant(replace: #""4096":4096"#, with: #""4096":9223372036854775807"#),
        Variant(replace: #""4096":4096"#, with: #""4096":9223372036854775808"#), Variant(replace: #""4096":4096"#, with: #""4096":12345678"#),
        Variant(replace: #""4096":4096"#, with: #""4096":123456789"#), Variant(replace: #""4096":4096"#, with: #""4096":4096,"#),
        Variant(replace: #""4096":4096"#, with: #""4\u0030096":4096"#),
        Variant(replace: #""sizeOnDisk":{"1024":2048,"16384":16384,"4096":4096,"512":1536}"#, with: #""sizeOnDisk":{}"#),
        // Integers elsewhere.
        Variant(replace: #""size":10"#, with: #""size":0"#), Variant(replace: #""size":10"#, with: #""size":10.0"#),
        Variant(replace: #""size":10"#, with: #""size":1e1"#), Variant(replace: #""size":10"#, with: #""size":-10"#),
        Variant(replace: #""size":10"#, with: #""size":10x"#), Variant(replace: #""size":10"#, with: #""size":99999999"#),
        // Digests in arrays and as keys.
        Variant(replace: #"["sha256:aaaa"#, with: #"["sha256:\u0061aaa"#), Variant(replace: #"["sha256:aaaa"#, with: #"["sha256:Aaaa"#),
        Variant(replace: #"["sha256:aaaa"#, with: #"["sha256:gaaa"#), Variant(replace: #"["sha256:aaaa"#, with: #"["sha257:aaaa"#),
        Variant(replace: #""bundles":["sha256:b"#, with: #""bundles":[],"x":["sha256:b"#),
        Variant(replace: #"a"],"center""#, with: #"a",],"center""#),
        Variant(replace: #"a"],"center""#, with: #"a","sha256:"# + String(repeating: "c", count: 64) + #""],"center""#),
        Variant(replace: #"{"sha256:aaaa"#, with: #"{"sha256:\u0061aaa"#), Variant(replace: #"{"sha256:aaaa"#, with: #"{"sha256:Aaaa"#),
        // Decimals.
        Variant(replace: "[35.293,-9.743]", with: "[35.293e0,-9.743]"), Variant(replace: "[35.293,-9.743]", with: "[-0.0,0]"),
        Variant(replace: "[35.293,-9.743]", with: "[0.1,123456789012345678]"),
        Variant(replace: "[35.293,-9.743]", with: "[0.000000000000000000000001,1]"),
        Variant(replace: "[35.293,-9.743]", with: "[1.5,]"), Variant(replace: "[35.293,-9.743]", with: "[01.5,2]"),
        Variant(replace: "[35.293,-9.743]", with: "[1.,2]"), Variant(replace: "[35.293,-9.743]", with: "[.5,2]"),
        Variant(replace: "[35.293,-9.743]", with: "[-,2]"), Variant(replace: "[35.293,-9.743]", with: "[]"),
        Variant(replace: "[35.293,-9.743]", with: "[1.7976931348623157e308,4.9e-324]"), Variant(replace: "[35.293,-9.743]", with: #"[1,"x"]"#),
        Variant(replace: "[35.293,-9.743]", with: "[123456789012345.5,1234567890123456]"),
        // Member keys.
        Variant(replace: #""id":"world/x""#, with: #""\u0069d":"world/x""#),
        Variant(replace: #""id":"world/x""#, with: #""id":"world/x","id":"world/y""#, likeJSONDecoder: false),
        Variant(replace: #""id":"world/x""#, with: #""id":"world/x","aVeryLongUnknownKeyOfManyBytes":[1,{"a":2}]"#),
        Variant(replace: #""id":"world/x""#, with: #""id":"world/x","é":1"#), Variant(replace: #""id":"world/x""#, with: #""id":"world/x","":1"#),
        Variant(replace: #""url":"b/b.tar.zst""#, with: #""url":"b/b.tar.zst","unpackedSizeX":1"#),
        Variant(replace: #""url":"b/b.tar.zst""#, with: #""ur\u006c":"b/c.tar.zst""#),
        Variant(replace: #""url":"b/b.tar.zst""#, with: #""url":"b\/b.tar.zst""#),
        // Strings.
        Variant(replace: #""released":"2026-11-20T00:00:00Z"}]"#, with: #""released":"2026-11-21T00:00:00Z"}]"#),
        Variant(replace: #""released":"2026-11-20T00:00:00Z"}]"#, with: #""released":"2026-11-20T00:00:00\u005a"}]"#),
        Variant(replace: #""cities":["Bern","Zürich"]"#, with: #""cities":["Bern","Z\u00fcrich","😀","\u0001"]"#),
    ])
    func edgeShapesReadAsTheGeneralPathsReadThem(_ variant: Variant) throws {
        let text = compactJSON.replacingOccurrences(of: variant.replace, with: variant.with)
        #expect(text != compactJSON)
        #expect(outcome(text) == outcome(spaced(text)))
        if variant.likeJSONDecoder, let ours = try? CatalogReader.read(Data(text.utf8), file: "catalog.json") {
            #expect(ours == (try JSONDecoder().decode(Catalog.self, from: Data(text.utf8))))
        }
    }

    /// A repeated key is refused wherever it is (readers that keep the first and readers that keep
    /// the last value would see two catalogs), naming the key.
    @Test(arguments: [
        (#""catalog":"c""#, #""catalog":"first","catalog":"c""#, "catalog"),
        (#""id":"world/x""#, #""id":"world/x","id":"world/y""#, "regions[1].id"),
        (#""url":"b/b.tar.zst""#, #""url":"b/b.tar.zst","url":"b/c.tar.zst""#, "url"),
        (#""bundles":{"#, #""bundles":{"sha256:\#(String(repeating: "b", count: 64))":{"size":1,"unpackedSize":1,"url":"x"},"#, "sha256:bbbb"),
        (#""names":{"#, #""names":{"en":"One","#, "names.en"),
    ])
    func aRepeatedKeyIsRefused(_ replace: String, _ with: String, _ named: String) throws {
        let text = compactJSON.replacingOccurrences(of: replace, with: with)
        #expect(text != compactJSON)
        for form in [text, spaced(text)] {
            let error = #expect(throws: JSONFileError.self) { try CatalogReader.read(Data(form.utf8), file: "catalog.json") }
            #expect(error.map { "\($0)".contains("appears twice") && "\($0)".contains(named) } == true, "\(String(describing: error))")
        }
    }

    @Test func everyTruncationOfTheCompactCatalogIsRefused() {
        let data = Data(compactJSON.utf8)
        for length in 0..<data.count {
            #expect((try? CatalogReader.read(data.prefix(length), file: "catalog.json")) == nil, "prefix of \(length) bytes")
        }
    }

    @Test func sizeTablesCompareByContentInAnyOrder() {
        let table = SizeOnDiskTable([(4096, 8), (512, 3), (4096, 9)])
        #expect(table.blockSizes == [512, 4096] && table.bytes == [3, 9])
        #expect(table == SizeOnDiskTable(strings: ["4096": 9, "512": 3]))
        #expect(table != SizeOnDiskTable(strings: ["4096": 9, "512": 4]))
        #expect(table != SizeOnDiskTable(strings: ["4096": 9]))
        #expect(table[4096] == 9 && table[1024] == nil)
    }
}
