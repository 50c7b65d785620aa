import Foundation
import MapFormat
import TestSupport
import Testing

private func manifestDigest(_ n: Int) -> BundleDigest {
    let hex = String(n, radix: 16)
    return BundleDigest(hex: String(repeating: "0", count: 64 - hex.count) + hex)
}

/// A manifest using every field, optional ones both present and absent, with awkward strings and doubles.
private func richManifest(regions regionCount: Int = 200, files fileCount: Int = 400, cacheSeed: Bool = true, language: String? = "de")
    -> ImageManifest
{
    var regions = [
        ImageRegion(
            id: "world", parent: nil, name: "Welt", names: ["en": "World", "zh": "世界"], bundles: [manifestDigest(0)],
            sizeOnDiskInBytes: Int64.max)
    ]
    var bundles = [ImageBundle(digest: manifestDigest(0), size: 1, url: "bundles/00/0.tar.zst", files: 0, unpackedSize: 0)]
    for n in 1..<regionCount {
        let lat = Double(n) * 0.123456789 - 45
        let lon = Double(n) * -1.0000001e-3 + Double.leastNonzeroMagnitude * Double(n % 3 * 1000)
        regions.append(
            ImageRegion(
                id: RegionID("world/r\(n)"), parent: n % 7 == 0 ? nil : "world", name: "Gebiet \"\(n)\" ö",
                names: n % 4 == 0 ? [:] : ["en": "Region \(n)", "ja": "地域 😀\n"],
                bundles: n % 6 == 0 ? [] : [manifestDigest(2 * n), manifestDigest(2 * n + 1)],
                sizeOnDiskInBytes: Int64(n) * 4096,
                center: n % 2 == 0 ? [lat, lon] : nil, bbox: n % 3 == 0 ? [lon - 1, lat - 1, lon + 1e21, lat + 1.5e-7] : nil,
                cities: n % 5 == 0 ? ["A", "B\\C", "\u{1}"] : nil, released: n % 5 == 1 ? "2026-11-20T00:00:00Z" : nil))
        bundles.append(
            ImageBundle(
                digest: manifestDigest(2 * n), size: Int64(n) << 33, url: "bundles/\(n).tar.zst", files: n,
                unpackedSize: Int64.max - Int64(n)))
    }
    let files = (0..<fileCount).map { (n: Int) -> ImageFile in
        let path: String = n % 9 == 0 ? "tiles/é/\(n)/地図.db" : "tiles/\(n % 17)/\(n).db"
        return ImageFile(
            path: try! StorePath(validating: path), size: n % 11 == 0 ? 0 : Int64(n) * 12345,
            sha256: SHA256Digest(hex: String(repeating: String(n % 16, radix: 16), count: 64))!, bundle: manifestDigest(2 * (n % regionCount)))
    }
    var manifest = ImageManifest(
        name: "rich \"image\"", catalog: "europe", mapVersion: MapVersion("2026.11.0"), built: "2026-11-20T00:00:00Z",
        mappackVersion: "1.4.0", blockSize: 4096, language: language, regions: regions, bundles: bundles, files: files,
        cacheSeed: cacheSeed
            ? ImageCacheSeed(
                sha256: SHA256Digest(hex: String(repeating: "a", count: 64))!, size: 352_256, entries: 3,
                regions: ["world", "world/r1"]) : nil)
    manifest.imageID = String(repeating: "b", count: 64)
    return manifest
}

private let hexA = String(repeating: "a", count: 64)
private let digestA = "sha256:" + hexA

/// A small valid manifest as JSON text, for the error tests to break.
private let smallJSON = """
    {"blockSize":4096,"built":"2026-11-20T00:00:00Z",
     "bundles":[{"digest":"\(digestA)","files":3,"size":10,"unpackedSize":20,"url":"bundles/aa.tar.zst"}],
     "cacheSeed":{"entries":3,"regions":["world"],"sha256":"\(hexA)","size":352256},
     "catalog":"europe",
     "files":[
      {"bundle":"\(digestA)","path":"a/1.db","sha256":"\(hexA)","size":1},
      {"bundle":"\(digestA)","path":"a/2.db","sha256":"\(hexA)","size":2},
      {"bundle":"\(digestA)","path":"a/3.db","sha256":"\(hexA)","size":3}
     ],
     "format":"mappack-image/1","imageID":"","language":"en","mapVersion":"2026.11.0","mappackVersion":"1.0","name":"small",
     "regions":[
      {"bundles":["\(digestA)"],"id":"world","name":"World","names":{"en":"World"},"sizeOnDiskInBytes":8192},
      {"bbox":[1,2,3,4],"bundles":[],"center":[1.5,-2e1],"cities":["x"],"id":"world/x","name":"X","names":{},"parent":"world","released":"r","sizeOnDiskInBytes":0}
     ]}
    """

private func read(_ text: String) throws -> ImageManifest { try ManifestReader.read(Data(text.utf8), file: "manifest.json") }

private func decoded(_ text: String) throws -> ImageManifest { try DecodedManifest.decode(Data(text.utf8)) }

private func readError(_ text: String) throws -> JSONFileError { try readError(Data(text.utf8)) }

private func readError(_ data: Data) throws -> JSONFileError {
    do {
        _ = try ManifestReader.read(data, file: "manifest.json")
    } catch let error as JSONFileError {
        return error
    }
    Issue.record("expected a JSONFileError")
    throw CancellationError()
}

@Suite struct ManifestReaderTests {
    @Test func matchesJSONDecoderOnCanonicalManifests() throws {
        for manifest in [richManifest(), richManifest(regions: 3, files: 0, cacheSeed: false, language: nil), richManifest(regions: 300, files: 700)]
        {
            let data = try CanonicalJSON.encode(manifest)
            let expected = try DecodedManifest.decode(data)
            #expect(try ManifestReader.read(data, file: "manifest.json") == expected)
            #expect(expected == manifest)
        }
    }

    @Test func matchesJSONDecoderOnSmallManifest() throws {
        let manifest = try read(smallJSON)
        #expect(manifest == (try decoded(smallJSON)))
        #expect(manifest.files.count == 3)
        #expect(manifest.cacheSeed?.regions == ["world"])
        #expect(manifest.regions[1].parent == "world")
        #expect(manifest.regions[0].parent == nil)
    }

    @Test func matchesJSONDecoderOnPrettyPrintedManifest() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted]
        let data = try encoder.encode(richManifest(regions: 30, files: 60))
        #expect(try ManifestReader.read(data, file: "manifest.json") == DecodedManifest.decode(data))
        // Windows line ends and a byte order mark.
        let crlf = Data([0xEF, 0xBB, 0xBF]) + Data(String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\n", with: "\r\n").utf8)
        #expect(try ManifestReader.read(crlf, file: "manifest.json") == DecodedManifest.decode(data))
    }

    @Test func skipsUnknownKeysWithNestedValues() throws {
        let unknown = #""future":{"a":[1,2.5e-3,{"b":[[],{}]},"s\"]",true,false,null],"c":{"d":"\u00e9"}},"#
        let text =
            smallJSON
            .replacingOccurrences(of: #"{"blockSize""#, with: "{" + unknown + #""blockSize""#)
            .replacingOccurrences(of: #"{"bundle":"#, with: "{" + unknown + #""bundle":"#)
            .replacingOccurrences(of: #""url":"#, with: unknown + #""url":"#)
            .replacingOccurrences(of: #"{"entries""#, with: "{" + unknown + #""entries""#)
            .replacingOccurrences(of: #""id":"world/x","#, with: #""id":"world/x","# + unknown)
        #expect(text != smallJSON)
        #expect(try read(text) == read(smallJSON))
        #expect(try read(text) == decoded(text))
    }

    @Test func acceptsNullAndAbsenceForOptionalFields() throws {
        let nulls =
            smallJSON
            .replacingOccurrences(of: #""language":"en""#, with: #""language":null"#)
            .replacingOccurrences(of: #""parent":"world""#, with: #""parent":null"#)
            .replacingOccurrences(of: #""bbox":[1,2,3,4]"#, with: #""bbox":null"#)
            .replacingOccurrences(of: #""center":[1.5,-2e1]"#, with: #""center":null"#)
            .replacingOccurrences(of: #""cities":["x"]"#, with: #""cities":null"#)
            .replacingOccurrences(of: #""released":"r""#, with: #""released":null"#)
        let manifest = try read(nulls)
        #expect(manifest.language == nil)
        #expect(manifest.regions[1].parent == nil && manifest.regions[1].center == nil && manifest.regions[1].released == nil)
        #expect(manifest == (try decoded(nulls)))
        let noSeed = smallJSON.replacingOccurrences(
            of: #""cacheSeed":{"entries":3,"regions":["world"],"sha256":"\#(hexA)","size":352256},"#,
            with: "")
        #expect(noSeed != smallJSON)
        #expect(try read(noSeed).cacheSeed == nil)
        #expect(try read(noSeed) == decoded(noSeed))
        let nullSeed = noSeed.replacingOccurrences(of: #""catalog""#, with: #""cacheSeed":null,"catalog""#)
        #expect(try read(nullSeed).cacheSeed == nil)
        #expect(try read(nullSeed) == decoded(nullSeed))
    }

    @Test func decodesStringEscapes() throws {
        let text = smallJSON.replacingOccurrences(of: #""path":"a/2.db""#, with: #""path":"q\"b\/\t\u00e9\u4E16\ud83d\ude00 é""#)
        #expect(try read(text).files[1].path.string == "q\"b/\té世😀 é")
        #expect(try read(text) == decoded(text))
        // A backslash is read as one, and is no store path: the entry is refused where it is read.
        let backslash = smallJSON.replacingOccurrences(of: #""path":"a/2.db""#, with: #""path":"q\\s""#)
        #expect(throws: ManifestEntryRefusal.notStorePath(path: "q\\s", .forbiddenByte)) {
            do { _ = try read(backslash) } catch let refused as ManifestReader.RefusedEntry { throw refused.refusal }
        }
    }

    struct Missing: Sendable, CustomTestStringConvertible {
        let remove: String
        var with = ""
        let path: String
        var testDescription: String { path }
    }

    @Test(arguments: [
        Missing(remove: #""format":"mappack-image/1","#, path: "format"),
        Missing(remove: #""imageID":"","#, path: "imageID"),
        Missing(remove: #""name":"small","#, path: "name"),
        Missing(remove: #""catalog":"europe","#, path: "catalog"),
        Missing(remove: #""mapVersion":"2026.11.0","#, path: "mapVersion"),
        Missing(remove: #""built":"2026-11-20T00:00:00Z","#, path: "built"),
        Missing(remove: #""mappackVersion":"1.0","#, path: "mappackVersion"),
        Missing(remove: #""blockSize":4096,"#, path: "blockSize"),
        Missing(remove: #""sha256":"\#(hexA)","size":3}"#, with: #""size":3}"#, path: "files[2].sha256"),
        Missing(remove: #""path":"a/2.db","#, path: "files[1].path"),
        Missing(remove: #","size":1}"#, with: "}", path: "files[0].size"),
        Missing(remove: #""bundle":"\#(digestA)","path":"a/3.db""#, with: #""path":"a/3.db""#, path: "files[2].bundle"),
        Missing(remove: #""digest":"\#(digestA)","#, path: "bundles[0].digest"),
        Missing(remove: #""files":3,"#, path: "bundles[0].files"),
        Missing(remove: #""size":10,"#, path: "bundles[0].size"),
        Missing(remove: #""unpackedSize":20,"#, path: "bundles[0].unpackedSize"),
        Missing(remove: #","url":"bundles/aa.tar.zst""#, path: "bundles[0].url"),
        Missing(remove: #""entries":3,"#, path: "cacheSeed.entries"),
        Missing(remove: #""regions":["world"],"#, path: "cacheSeed.regions"),
        Missing(remove: #","sha256":"\#(hexA)","size":352256"#, with: #","size":352256"#, path: "cacheSeed.sha256"),
        Missing(remove: #""id":"world/x","#, path: "regions[1].id"),
        Missing(remove: #""name":"X","#, path: "regions[1].name"),
        Missing(remove: #""names":{},"#, path: "regions[1].names"),
        Missing(remove: #""bundles":[],"#, path: "regions[1].bundles"),
        Missing(remove: #","sizeOnDiskInBytes":0"#, path: "regions[1].sizeOnDiskInBytes"),
    ])
    func namesTheMissingRequiredField(_ missing: Missing) throws {
        #expect(smallJSON.components(separatedBy: missing.remove).count == 2)
        let text = smallJSON.replacingOccurrences(of: missing.remove, with: missing.with)
        let error = try readError(text)
        #expect(error.codingPath == missing.path)
        #expect(error.reason.contains("missing required field"))
        #expect((try? decoded(text)) == nil)
    }

    @Test func namesTheMissingArrays() throws {
        let head = #"{"format":"f","imageID":"","name":"n","catalog":"c","mapVersion":"1","built":"b","mappackVersion":"m","blockSize":1"#
        #expect(try readError(head + #","bundles":[],"files":[]}"#).codingPath == "regions")
        #expect(try readError(head + #","regions":[],"files":[]}"#).codingPath == "bundles")
        #expect(try readError(head + #","regions":[],"bundles":[]}"#).codingPath == "files")
        let complete = head + #","regions":[],"bundles":[],"files":[]}"#
        #expect(try read(complete) == decoded(complete))
    }

    @Test func namesThePathOfAWrongType() throws {
        let error = try readError(smallJSON.replacingOccurrences(of: #""size":2}"#, with: #""size":"2"}"#))
        #expect(error.codingPath == "files[1].size")
        #expect(error.reason == "expected a number, found a string")
        #expect(error.line == 7)
        #expect(try readError(smallJSON.replacingOccurrences(of: #""path":"a/3.db""#, with: #""path":null"#)).codingPath == "files[2].path")
        #expect(try readError(smallJSON.replacingOccurrences(of: #""parent":"world""#, with: #""parent":7"#)).codingPath == "regions[1].parent")
        #expect(try readError(smallJSON.replacingOccurrences(of: "[1.5,-2e1]", with: #"[1.5,"x"]"#)).codingPath == "regions[1].center[1]")
        #expect(
            try readError(smallJSON.replacingOccurrences(of: #""names":{"en":"World"}"#, with: #""names":{"en":null}"#)).codingPath
                == "regions[0].names.en")
        #expect(
            try readError(smallJSON.replacingOccurrences(of: #""regions":["world"]"#, with: #""regions":["world",1]"#)).codingPath
                == "cacheSeed.regions[1]")
        #expect(try readError(smallJSON.replacingOccurrences(of: #""language":"en""#, with: #""language":false"#)).codingPath == "language")
        #expect(try readError(smallJSON.replacingOccurrences(of: #""files":3"#, with: #""files":3.5"#)).codingPath == "bundles[0].files")
        #expect(try readError(smallJSON.replacingOccurrences(of: #""cacheSeed":{"#, with: #""cacheSeed":7,"x":{"#)).codingPath == "cacheSeed")
        #expect(try readError(#"{"files":{}}"#).codingPath == "files")
        #expect(try readError(#"{"files":[1]}"#).codingPath == "files[0]")
        #expect(try readError("[]").reason == "expected an object (an image manifest), found an array")
    }

    @Test func rejectsDigestsThatAreNotDigests() throws {
        let short = "sha256:" + String(repeating: "a", count: 63)
        let upper = "sha256:" + String(repeating: "A", count: 64)
        let badFile = smallJSON.replacingOccurrences(of: #"{"bundle":"\#(digestA)","path":"a/2.db""#, with: #"{"bundle":"\#(upper)","path":"a/2.db""#)
        #expect(badFile != smallJSON)
        #expect(try readError(badFile).codingPath == "files[1].bundle")
        #expect(try readError(badFile).reason.contains("is not a bundle digest"))
        #expect((try? decoded(badFile)) == nil)
        let badReference = smallJSON.replacingOccurrences(of: #""bundles":[]"#, with: #""bundles":["\#(short)"]"#)
        #expect(try readError(badReference).codingPath == "regions[1].bundles[0]")
        // `sha256` of a file is a digest, read by the same rule as the Codable conformance.
        for text in ["XYZ", String(repeating: "A", count: 64), String(repeating: "a", count: 63)] {
            let notHex = smallJSON.replacingOccurrences(of: #""path":"a/1.db","sha256":"\#(hexA)""#, with: #""path":"a/1.db","sha256":"\#(text)""#)
            #expect(notHex != smallJSON)
            #expect(try readError(notHex).codingPath == "files[0].sha256")
            #expect(try readError(notHex).reason.contains("is not a SHA-256 digest"))
            #expect((try? decoded(notHex)) == nil)
        }
    }

    @Test(arguments: [
        "sha256:" + String(repeating: "0", count: 64), "sha256:" + String(repeating: "f", count: 64),
        "sha256:" + String(repeating: "F", count: 64), "sha256:" + String(repeating: "a", count: 63),
        "sha256:" + String(repeating: "a", count: 65), "sha512:" + String(repeating: "a", count: 64),
        "sha256:" + String(repeating: "é", count: 32), "sha256:" + String(repeating: "\\u0061", count: 64), "",
    ])
    func acceptsExactlyWhatBundleDigestAccepts(_ text: String) throws {
        let json = smallJSON.replacingOccurrences(of: #""bundle":"\#(digestA)","path":"a/3.db""#, with: #""bundle":"\#(text)","path":"a/3.db""#)
        #expect(json != smallJSON)
        let accepted = (try? read(json)) != nil
        #expect(accepted == ((try? decoded(json)) != nil))
    }

    struct Syntax: Sendable, CustomTestStringConvertible {
        let text: String
        let line: Int
        let column: Int
        var testDescription: String { text }
    }

    @Test(arguments: [
        Syntax(text: "{\n  \"format\": \"f\",\n  \"name\" \"c\"\n}", line: 3, column: 10),
        Syntax(text: "{\"files\":[{\"path\":\"a\",}]}", line: 1, column: 23),
        Syntax(text: "{\"files\":[{\"size\":tru}]}", line: 1, column: 19),
        Syntax(text: "{\"files\":[{\"path\":\"a\\x\"}]}", line: 1, column: 21),
        Syntax(text: "{\"blockSize\":01}", line: 1, column: 14),
        Syntax(text: "{\"name\":\"é\",\n\"files\":[-]}", line: 2, column: 11),
        Syntax(text: "{\"files\":[{} {}]}", line: 1, column: 14),
        Syntax(text: "{} x", line: 1, column: 4),
        Syntax(text: "", line: 1, column: 1),
        Syntax(text: "{\"name\":\"a\u{1}\"}", line: 1, column: 11),
    ])
    func reportsSyntaxErrorsWithLineAndColumn(_ syntax: Syntax) throws {
        let error = try readError(syntax.text)
        #expect(error.line == syntax.line)
        #expect(error.column == syntax.column)
        #expect(error.description.hasPrefix("manifest.json:\(syntax.line):\(syntax.column):"))
        #expect((try? decoded(syntax.text)) == nil)
    }

    @Test func syntaxErrorsComeBeforeDecodingErrors() throws {
        let error = try readError(#"{"format":"f",\#n"x":[1,]}"#)
        #expect(error.line == 2)
        #expect(!error.reason.contains("missing"))
        // A file missing a field, a wrong type or a bad digest, and a syntax error further on: as
        // JSONDecoder, which parses first, the syntax error is reported.
        for broken in [#""path":"a/1.db","#, #""size":2"#, #""bundle":"\#(digestA)","path":"a/3.db""#] {
            let replacement = broken == #""size":2"# ? #""size":true"# : broken == #""path":"a/1.db","# ? "" : #""bundle":"x","path":"a/3.db""#
            let text = smallJSON.replacingOccurrences(of: broken, with: replacement)
                .replacingOccurrences(of: #""sizeOnDiskInBytes":0}"#, with: #""sizeOnDiskInBytes":0,}"#)
            let error = try readError(text)
            #expect(error.line == 13, "\(error)")
            #expect(error.reason.contains("after ','"), "\(error)")
        }
    }

    /// Readers that keep the first and readers that keep the last of a repeated key would see two
    /// manifests: a repeated key is refused, naming it, in every kind of object.
    @Test(arguments: [
        (#""path":"a/2.db","#, #""path":"a/2.db","path":"b","#, "files[1].path"),
        (#""size":2}"#, #""size":2,"size":3}"#, "files[1].size"),
        (#""name":"small""#, #""name":"small","name":"other""#, "name"),
        (#""names":{"en":"World"}"#, #""names":{"en":"World","en":"Welt"}"#, "names.en"),
        (#""parent":"world""#, #""parent":null,"parent":"world""#, "regions[1].parent"),
    ])
    func repeatedKeysAreRefused(_ replace: String, _ with: String, _ path: String) throws {
        let text = smallJSON.replacingOccurrences(of: replace, with: with)
        #expect(text != smallJSON)
        let error = try readError(text)
        #expect(error.reason.contains("appears twice") && error.codingPath.hasSuffix(path), "\(error)")
    }

    @Test func rejectsNestingBeyond512Levels() throws {
        func nested(_ depth: Int) -> String {
            smallJSON.replacingOccurrences(
                of: #"{"blockSize""#,
                with: #"{"deep":"# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + #","blockSize""#)
        }
        #expect(try read(nested(510)) == read(smallJSON))
        #expect(try readError(nested(100_000)).reason.contains("deeper than 512"))
        #expect(try readError(#"{"files":[{"x":"# + String(repeating: "{\"a\":", count: 600)).reason.contains("deeper than 512"))
    }

    @Test(arguments: [
        "99999999999999999999", "9223372036854775808", "-9223372036854775809", "1e400", "1.5", "1e19",
        String(repeating: "9", count: 5000),
    ])
    func rejectsIntegersOutsideInt64(_ number: String) throws {
        let text = smallJSON.replacingOccurrences(of: #""size":2}"#, with: #""size":\#(number)}"#)
        let error = try readError(text)
        #expect(error.codingPath == "files[1].size")
        #expect((try? decoded(text)) == nil)
    }

    @Test func acceptsIntegersAtInt64sEdgesAndIntegralExponents() throws {
        let text = smallJSON.replacingOccurrences(of: #""size":1}"#, with: #""size":9223372036854775807}"#)
            .replacingOccurrences(of: #""size":2}"#, with: #""size":-9223372036854775808}"#)
            .replacingOccurrences(of: #""size":3}"#, with: #""size":2e3}"#)
        let files = try read(text).files
        #expect(files.map(\.size) == [.max, .min, 2000])
        #expect(try read(text) == decoded(text))
    }

    @Test func readsHugeAndTinyDoubles() throws {
        #expect(try readError(smallJSON.replacingOccurrences(of: "[1.5,-2e1]", with: "[1.5,-2e999]")).codingPath == "regions[1].center[1]")
        let text = smallJSON.replacingOccurrences(of: "[1.5,-2e1]", with: "[4.9e-324,-0,0.1e1,123456789012345678901234567890,1E2]")
        #expect(try read(text).regions[1].center == [Double.leastNonzeroMagnitude, -0.0, 1, Double("123456789012345678901234567890")!, 100])
        #expect(try read(text) == decoded(text))
        // Known difference, from JSONScanner (CatalogReader's too): JSONDecoder rejects a Double that
        // underflows to zero, the scanner reads it as 0.
        let underflow = smallJSON.replacingOccurrences(of: "[1.5,-2e1]", with: "[1e-400,0]")
        #expect(try read(underflow).regions[1].center == [0, 0])
    }

    @Test func rejectsEveryTruncation() throws {
        let data = Data(smallJSON.utf8)
        for length in 0..<data.count {
            #expect((try? ManifestReader.read(data.prefix(length), file: "manifest.json")) == nil, "prefix of \(length) bytes")
        }
        #expect(try ManifestReader.read(data, file: "manifest.json") == read(smallJSON))
    }

    @Test(arguments: [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80]] as [[UInt8]])
    func rejectsInvalidUTF8(_ bytes: [UInt8]) throws {
        var data = Data()
        let parts = smallJSON.components(separatedBy: "a/2.db")
        data.append(Data(parts[0].utf8))
        data.append(contentsOf: bytes)
        data.append(Data(parts.dropFirst().joined(separator: "a/2.db").utf8))
        let error = try readError(data)
        #expect(error.reason.contains("UTF-8"))
        #expect(error.codingPath == "files[1].path")
    }

    @Test func survivesArbitraryBytes() {
        // A fixed-seed generator (SplitMix64), so a failure reproduces.
        struct SplitMix: RandomNumberGenerator {
            var state: UInt64 = 7
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
            let ours = try? ManifestReader.read(Data(bytes), file: "manifest.json")
            if let ours {
                #expect(ours == (try? DecodedManifest.decode(Data(bytes))), "\(String(decoding: bytes, as: UTF8.self))")
            }
        }
    }

    /// Equivalence and a timing on a real manifest (`MAPPACK_MANIFEST=/path/to/manifest.json`);
    /// prints, asserts nothing about speed.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["MAPPACK_MANIFEST"] != nil))
    func matchesJSONDecoderOnARealManifest() throws {
        let path = try #require(ProcessInfo.processInfo.environment["MAPPACK_MANIFEST"])
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let expected = try DecodedManifest.decode(data)
        #expect(try ManifestReader.read(data, file: path) == expected)
        // Results are kept so the timings leave out freeing the manifest.
        var kept: [ImageManifest] = []
        let reader = try MedianTiming.milliseconds { kept.append(try ManifestReader.read(data, file: path)) }
        let decoder = try MedianTiming.milliseconds { kept.append(try DecodedManifest.decode(data)) }
        #expect(kept.count == 14)
        print(
            "manifest \(data.count) bytes, \(expected.files.count) files, \(expected.regions.count) regions, \(expected.bundles.count) bundles: "
                + "ManifestReader \(String(format: "%.1f", reader)) ms, JSONDecoder \(String(format: "%.1f", decoder)) ms, "
                + "ratio \(String(format: "%.3f", reader / decoder)) (\(String(format: "%.1f", decoder / reader))x faster)")
    }
}
