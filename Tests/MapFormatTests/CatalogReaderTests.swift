import Foundation
import MapFormat
import TestSupport
import Testing

/// A catalog using every field, with awkward doubles and non-ASCII names.
private func richCatalog(regions count: Int = 200) -> Catalog {
    func digest(_ n: Int) -> BundleDigest {
        let hex = String(n, radix: 16)
        return BundleDigest(hex: String(repeating: "0", count: 64 - hex.count) + hex)
    }
    var regions: [CatalogRegion] = [CatalogRegion(id: "world", parent: nil, names: ["en": "World", "zh": "世界"], bundles: [digest(0)])]
    var bundles: [BundleDigest: BundleInfo] = [digest(0): BundleInfo(url: "b/world.tar.zst", size: 1, unpackedSize: 2, files: nil, kind: nil)]
    for n in 1..<count {
        let id = RegionID("world/r\(n)")
        let lat = Double(n) * 0.123456789 - 45
        let lon = Double(n) * -1.0000001e-3 + Double.leastNonzeroMagnitude * Double(n % 3 * 1000)
        regions.append(
            CatalogRegion(
                id: id, parent: "world", names: ["en": "Region \(n)", "de": "Gebiet \"\(n)\" ö", "ja": "地域 😀\n"],
                bundles: [digest(2 * n), digest(2 * n + 1)], center: [lat, lon],
                bbox: n % 2 == 0 ? [lon - 1, lat - 1, lon + 1e21, lat + 1.5e-7] : nil,
                cities: n % 3 == 0 ? ["A", "B\\C", "\u{1}"] : nil, released: n % 5 == 0 ? "2026-11-20T00:00:00Z" : nil))
        for bundle in [2 * n, 2 * n + 1] {
            bundles[digest(bundle)] = BundleInfo(
                url: "b/\(bundle).tar.zst", size: Int64(bundle) << 33, unpackedSize: Int64.max - Int64(bundle),
                files: bundle, kind: "tiles",
                sizeOnDisk: Dictionary(uniqueKeysWithValues: BundleInfo.publishedBlockSizes.map { (String($0), $0 * Int64(bundle)) }))
        }
    }
    var catalog = Catalog(catalog: "rich", mapVersion: MapVersion("2026.11.0"), released: "2026-11-20T00:00:00Z", regions: regions, bundles: bundles)
    catalog.supportedUntil = "2027-11-20"
    return catalog
}

/// A small valid catalog as JSON text, for the error tests to break.
private let smallJSON = """
    {"format":"mappack-catalog/1","catalog":"c","mapVersion":"1.0",
     "regions":[
      {"id":"world","parent":null,"names":{"en":"World"},"bundles":["sha256:\(String(repeating: "a", count: 64))"]},
      {"id":"world/x","parent":"world","names":{"en":"X"},"bundles":[],"center":[1.5,-2e1]}
     ],
     "bundles":{"sha256:\(String(repeating: "a", count: 64))":{"url":"b/a.tar.zst","size":10,"unpackedSize":20,"sizeOnDisk":{"4096":4096}}}}
    """

private func read(_ text: String) throws -> Catalog { try CatalogReader.read(Data(text.utf8), file: "catalog.json") }

private func readError(_ text: String) throws -> JSONFileError { try readError(Data(text.utf8)) }

private func readError(_ data: Data) throws -> JSONFileError {
    do {
        _ = try CatalogReader.read(data, file: "catalog.json")
    } catch let error as JSONFileError {
        return error
    }
    Issue.record("expected a JSONFileError")
    throw CancellationError()
}

@Suite struct CatalogReaderTests {
    @Test func matchesJSONDecoderOnCanonicalCatalogs() throws {
        for catalog in [sampleCatalog(), richCatalog()] {
            let data = try CanonicalJSON.encode(catalog)
            let expected = try JSONDecoder().decode(Catalog.self, from: data)
            #expect(try CatalogReader.read(data, file: "catalog.json") == expected)
            #expect(expected == catalog)
        }
    }

    @Test func matchesJSONDecoderOnPrettyPrintedCatalog() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted]
        let data = try encoder.encode(richCatalog(regions: 30))
        #expect(try CatalogReader.read(data, file: "catalog.json") == JSONDecoder().decode(Catalog.self, from: data))
    }

    @Test func decodesEveryStringEscape() throws {
        let text = smallJSON.replacingOccurrences(of: #""en":"X""#, with: #""en":"q\"b\\s\/\b\f\n\r\t\u00e9\u4E16\ud83d\ude00 é", "\u0064e":"ok""#)
        let catalog = try read(text)
        #expect(catalog.regions[1].names == ["en": "q\"b\\s/\u{8}\u{c}\n\r\té世😀 é", "de": "ok"])
        #expect(catalog == (try JSONDecoder().decode(Catalog.self, from: Data(text.utf8))))
    }

    @Test func skipsUnknownKeysWithNestedValues() throws {
        let unknown = #""future":{"a":[1,2.5e-3,{"b":[[],{}]},"s\"]",true,false,null],"c":{"d":"\u00e9"}},"#
        let text =
            smallJSON
            .replacingOccurrences(of: #"{"format""#, with: "{" + unknown + #""format""#)
            .replacingOccurrences(of: #""id":"world/x","#, with: #""id":"world/x","# + unknown)
            .replacingOccurrences(of: #""url":"#, with: unknown + #""url":"#)
        #expect(try read(text) == read(smallJSON))
    }

    @Test func acceptsNullForOptionalFields() throws {
        let text = smallJSON.replacingOccurrences(of: #""center":[1.5,-2e1]"#, with: #""center":null,"bbox":null,"cities":null,"released":null"#)
        #expect(try read(text).regions[1].center == nil)
        #expect(try read(text) == JSONDecoder().decode(Catalog.self, from: Data(text.utf8)))
    }

    struct Missing: Sendable, CustomTestStringConvertible {
        let remove: String
        let path: String
        var testDescription: String { path }
    }

    @Test(arguments: [
        Missing(remove: #""format":"mappack-catalog/1","#, path: "format"),
        Missing(remove: #""catalog":"c","#, path: "catalog"),
        Missing(remove: #""mapVersion":"1.0","#, path: "mapVersion"),
        Missing(remove: #""id":"world/x","#, path: "regions[1].id"),
        Missing(remove: #""parent":"world","#, path: "regions[1].parent"),
        Missing(remove: #""names":{"en":"X"},"#, path: "regions[1].names"),
        Missing(remove: #""bundles":[],"#, path: "regions[1].bundles"),
        Missing(remove: #""url":"b/a.tar.zst","#, path: "bundles.sha256:\(String(repeating: "a", count: 64)).url"),
        Missing(remove: #""size":10,"#, path: "bundles.sha256:\(String(repeating: "a", count: 64)).size"),
        Missing(remove: #""unpackedSize":20,"#, path: "bundles.sha256:\(String(repeating: "a", count: 64)).unpackedSize"),
    ])
    func namesTheMissingRequiredField(_ missing: Missing) throws {
        let text = smallJSON.replacingOccurrences(of: missing.remove, with: "")
        #expect(text != smallJSON)
        let error = try readError(text)
        #expect(error.codingPath == missing.path)
        #expect(error.reason.contains("missing required field"))
        #expect((try? JSONDecoder().decode(Catalog.self, from: Data(text.utf8))) == nil)
    }

    @Test func namesTheMissingRegionsAndBundles() throws {
        #expect(try readError(#"{"format":"f","catalog":"c","mapVersion":"1","bundles":{}}"#).codingPath == "regions")
        #expect(try readError(#"{"format":"f","catalog":"c","mapVersion":"1","regions":[]}"#).codingPath == "bundles")
    }

    @Test func namesThePathOfAWrongType() throws {
        let error = try readError(smallJSON.replacingOccurrences(of: #""parent":"world""#, with: #""parent":7"#))
        #expect(error.codingPath == "regions[1].parent")
        #expect(error.reason == "expected a string, found a number")
        #expect(error.line == 4)
        #expect(try readError(smallJSON.replacingOccurrences(of: "[1.5,-2e1]", with: #"[1.5,"x"]"#)).codingPath == "regions[1].center[1]")
        #expect(
            try readError(smallJSON.replacingOccurrences(of: #""size":10"#, with: #""size":"10""#)).codingPath
                == "bundles.sha256:\(String(repeating: "a", count: 64)).size")
        #expect(
            try readError(smallJSON.replacingOccurrences(of: #""names":{"en":"X"}"#, with: #""names":{"en":null}"#)).codingPath
                == "regions[1].names.en")
        #expect(try readError("[]").reason == "expected an object (a catalog), found an array")
    }

    @Test func rejectsBundleKeysAndReferencesThatAreNotDigests() throws {
        let short = "sha256:" + String(repeating: "a", count: 63)
        let upper = "sha256:" + String(repeating: "A", count: 64)
        let bad = smallJSON.replacingOccurrences(of: "\"sha256:\(String(repeating: "a", count: 64))\":", with: "\"\(upper)\":")
        #expect(try readError(bad).reason.contains("is not a digest"))
        let badReference = smallJSON.replacingOccurrences(of: #""bundles":[]"#, with: #""bundles":["\#(short)"]"#)
        #expect(try readError(badReference).codingPath == "regions[1].bundles[0]")
    }

    @Test(arguments: [
        "sha256:" + String(repeating: "0", count: 64), "sha256:" + String(repeating: "f", count: 64),
        "sha256:" + String(repeating: "F", count: 64), "sha256:" + String(repeating: "a", count: 63),
        "sha256:" + String(repeating: "a", count: 65), "sha512:" + String(repeating: "a", count: 64),
        "sha256:" + String(repeating: "g", count: 64), "sha256:" + String(repeating: "é", count: 32), "",
    ])
    func acceptsExactlyWhatBundleDigestAccepts(_ text: String) throws {
        let json = smallJSON.replacingOccurrences(of: #""bundles":[]"#, with: #""bundles":["\#(text)"]"#)
        let accepted = (try? read(json)) != nil
        #expect(accepted == (BundleDigest(text) != nil))
        #expect(accepted == ((try? JSONDecoder().decode(Catalog.self, from: Data(json.utf8))) != nil))
    }

    struct Syntax: Sendable, CustomTestStringConvertible {
        let text: String
        let line: Int
        let column: Int
        var testDescription: String { text }
    }

    @Test(arguments: [
        Syntax(text: "{\n  \"format\": \"f\",\n  \"catalog\" \"c\"\n}", line: 3, column: 13),
        Syntax(text: "{\"format\":\"f\",}", line: 1, column: 15),
        Syntax(text: "{\"format\":tru}", line: 1, column: 11),
        Syntax(text: "{\"format\":\"a\\x\"}", line: 1, column: 13),
        Syntax(text: "{\"format\":01}", line: 1, column: 11),
        Syntax(text: "{\"format\":\"é\",\n\"x\":-}", line: 2, column: 6),
        Syntax(text: "{\"x\":[1 2]}", line: 1, column: 9),
        Syntax(text: "{} x", line: 1, column: 4),
        Syntax(text: "", line: 1, column: 1),
        Syntax(text: "{\"format\":\"a\u{1}\"}", line: 1, column: 13),
        Syntax(text: "{\"format\":\"\\ud800x\"}", line: 1, column: 12),
    ])
    func reportsSyntaxErrorsWithLineAndColumn(_ syntax: Syntax) throws {
        let error = try readError(syntax.text)
        #expect(error.line == syntax.line)
        #expect(error.column == syntax.column)
        #expect(error.description.hasPrefix("catalog.json:\(syntax.line):\(syntax.column):"))
    }

    @Test func rejectsNestingBeyond512Levels() throws {
        func nested(_ depth: Int) -> String {
            smallJSON.replacingOccurrences(
                of: #"{"format""#, with: #"{"deep":"# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + #","format""#)
        }
        #expect(try read(nested(510)) == read(smallJSON))
        #expect(try readError(nested(100_000)).reason.contains("deeper than 512"))
        #expect(try readError(#"{"deep":"# + String(repeating: "{\"a\":", count: 600)).reason.contains("deeper than 512"))
    }

    @Test(arguments: [
        "99999999999999999999", "9223372036854775808", "-9223372036854775809", "1e400", "1.5", "1e19",
        String(repeating: "9", count: 5000),
    ])
    func rejectsIntegersOutsideInt64(_ number: String) throws {
        let error = try readError(smallJSON.replacingOccurrences(of: #""size":10"#, with: #""size":\#(number)"#))
        #expect(error.codingPath == "bundles.sha256:\(String(repeating: "a", count: 64)).size")
    }

    @Test func acceptsIntegersAtInt64sEdgesAndIntegralExponents() throws {
        let text = smallJSON.replacingOccurrences(
            of: #""size":10,"unpackedSize":20"#, with: #""size":9223372036854775807,"unpackedSize":2e3,"files":-9223372036854775808"#)
        let bundle = try #require(read(text).bundles.values.first)
        #expect(bundle.size == .max)
        #expect(bundle.unpackedSize == 2000)
        #expect(bundle.files == .min)
    }

    @Test func rejectsDoublesOutOfRange() throws {
        #expect(try readError(smallJSON.replacingOccurrences(of: "[1.5,-2e1]", with: "[1.5,-2e999]")).codingPath == "regions[1].center[1]")
        let tiny = try read(smallJSON.replacingOccurrences(of: "[1.5,-2e1]", with: "[4.9e-324,1e-400,0.1e1,123456789012345678901234567890]"))
        #expect(tiny.regions[1].center == [Double.leastNonzeroMagnitude, 0, 1, Double("123456789012345678901234567890")!])
    }

    @Test func rejectsEveryTruncation() throws {
        let data = Data(smallJSON.utf8)
        for length in 0..<data.count {
            #expect((try? CatalogReader.read(data.prefix(length), file: "catalog.json")) == nil, "prefix of \(length) bytes")
        }
        #expect(try CatalogReader.read(data, file: "catalog.json") == read(smallJSON))
    }

    @Test(arguments: [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80]] as [[UInt8]])
    func rejectsInvalidUTF8(_ bytes: [UInt8]) throws {
        for (placeholder, path) in [("World", "regions[0].names.en"), ("future", "")] {
            let text = smallJSON.replacingOccurrences(of: #"{"format""#, with: #"{"future":1,"format""#)
            var data = Data()
            let parts = text.components(separatedBy: placeholder)
            data.append(Data(parts[0].utf8))
            data.append(contentsOf: bytes)
            data.append(Data(parts.dropFirst().joined(separator: placeholder).utf8))
            let error = try readError(data)
            #expect(error.reason.contains("UTF-8"))
            #expect(error.codingPath == path)
        }
    }

    @Test func survivesArbitraryBytes() {
        // A fixed-seed generator (SplitMix64), so a failure reproduces.
        struct SplitMix: RandomNumberGenerator {
            var state: UInt64 = 42
            mutating func next() -> UInt64 {
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return z ^ (z >> 31)
            }
        }
        var generator = SplitMix()
        let seed = Array(smallJSON.utf8)
        for _ in 0..<600 {
            var bytes = seed
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            let ours = try? CatalogReader.read(Data(bytes), file: "catalog.json")
            if let ours { #expect(ours == (try? JSONDecoder().decode(Catalog.self, from: Data(bytes))), "\(String(decoding: bytes, as: UTF8.self))") }
        }
    }

    /// Equivalence and a timing on a real catalog (`Benchmarks/plan.sh` sets the variable);
    /// prints, asserts nothing about speed.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["MAPPACK_CATALOG"] != nil))
    func matchesJSONDecoderOnPublishedCatalog() throws {
        let path = try #require(ProcessInfo.processInfo.environment["MAPPACK_CATALOG"])
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let expected = try JSONDecoder().decode(Catalog.self, from: data)
        #expect(try CatalogReader.read(data, file: path) == expected)
        // Results are kept so the timings leave out freeing the catalog, as `plan` never frees it.
        var kept: [Catalog] = []
        let reader = try MedianTiming.milliseconds { kept.append(try CatalogReader.read(data, file: path)) }
        let decoder = try MedianTiming.milliseconds { kept.append(try JSONDecoder().decode(Catalog.self, from: data)) }
        #expect(kept.count == 14)
        print(
            "catalog \(data.count) bytes, \(expected.regions.count) regions, \(expected.bundles.count) bundles: "
                + "CatalogReader \(String(format: "%.1f", reader)) ms, JSONDecoder \(String(format: "%.1f", decoder)) ms, "
                + "ratio \(String(format: "%.3f", reader / decoder)) (\(String(format: "%.1f", decoder / reader))x faster)")
    }
}
