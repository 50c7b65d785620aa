import Foundation
import MapIO
import TestSupport
import Testing

/// `mappack publish --chunked` (issue 21): every bundle also as a `.zck` whose data section is the
/// bundle's `.tar.zst` byte for byte, listed under the bundle's optional `"chunked"` field.
@Suite struct ChunkedPublishTests {
    @Test func chunkedPublishListsAZckPerBundleWhoseDataIsTheBundle() throws {
        let folder = TemporaryFolder("chunked-publish")
        let gen = try Tool.run(Tool.path("demo-world"), ["--out", folder.join("src"), "--only", "europe/li", "--scale", "0.2"])
        #expect(gen.status == 0, "\(gen.stderr)")
        let published = try Tool.mappack(["publish", folder.join("src"), "--out", folder.join("cat"), "--chunked"])
        #expect(published.status == 0, "\(published.stderr)")
        let catalog = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder.join("cat/catalog.json")))) as? [String: Any])
        #expect(catalog["format"] as? String == "mappack-catalog/1")
        let bundles = try #require(catalog["bundles"] as? [String: [String: Any]])
        #expect(!bundles.isEmpty)
        for (digest, bundle) in bundles {
            let chunked = try #require(bundle["chunked"] as? [String: Any], "bundle \(digest) has no chunked variant")
            let url = try #require(chunked["url"] as? String)
            let headerSize = try #require((chunked["headerSize"] as? NSNumber)?.intValue)
            let zck = try Data(contentsOf: URL(fileURLWithPath: folder.join("cat/" + url)))
            let tarZst = try Data(contentsOf: URL(fileURLWithPath: folder.join("cat/" + (bundle["url"] as! String))))
            #expect((chunked["size"] as? NSNumber)?.intValue == zck.count)
            #expect(zck.count > headerSize)
            #expect(zck.subdata(in: headerSize..<zck.count) == tarZst, "bundle \(digest): the .zck's data is the .tar.zst")
            #expect(SHA256.hex(zck.prefix(headerSize)) == chunked["headerSHA256"] as? String)
            #expect(digest == "sha256:" + SHA256.hex(tarZst))
            // The cutting parameters a device must cut and compress with: a 64th of the bundle's tar
            // (at least 1 KiB; these bundles are small), normalized cuts from a quarter to four times it.
            let chunkSize = (chunked["chunkSize"] as? NSNumber)?.intValue ?? 0
            let unpacked = (bundle["unpackedSize"] as? NSNumber)?.int64Value ?? 0
            #expect(unpacked < 64 << 10 ? chunkSize == 1024 : [1024, 2048, 4096, 8192].contains(chunkSize), "\(chunked)")
            #expect((chunked["minChunk"] as? NSNumber)?.intValue == chunkSize / 4, "\(chunked)")
            #expect((chunked["maxChunk"] as? NSNumber)?.intValue == chunkSize * 4, "\(chunked)")
            #expect((chunked["normalization"] as? NSNumber)?.intValue == 1, "\(chunked)")
            #expect((chunked["level"] as? NSNumber)?.intValue == 6, "\(chunked)")
            #expect(chunked["sqlitePages"] as? Bool == true, "SQLite databases are cut on their pages: \(chunked)")
        }
        // The zchunk tools read it; and a plain build (an old reader) still works from the same catalog.
        let first = try #require(bundles.values.first?["chunked"] as? [String: Any])
        let header = try Tool.run("/usr/bin/zck_read_header", [folder.join("cat/" + (first["url"] as! String))])
        #expect(header.status == 0, "\(header.stderr)")
        try Data("name: li\ncatalog: cat/catalog.json\nregions:\n  include: [europe/li]\n".utf8).write(
            to: URL(fileURLWithPath: folder.join("li.yaml")))
        let build = try Tool.mappack(["build", folder.join("li.yaml"), "--cache", folder.join("cache"), "--out", folder.join("out")])
        #expect(build.status == 0, "\(build.stderr)")
        let verify = try Tool.mappack(["verify", folder.join("out/li-2026.11.0"), "--full"])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
    }

    /// `MAPPACK_ZCK_CHUNK` is the publisher's choice, recorded per bundle; a catalog whose chunking
    /// parameters are hostile is refused by every verb with exit 2, naming the bundle and the field.
    @Test func thePublishersChunkSizeIsRecordedAndHostileOnesAreRefused() throws {
        let folder = TemporaryFolder("chunked-params")
        let gen = try Tool.run(Tool.path("demo-world"), ["--out", folder.join("src"), "--only", "europe/li", "--scale", "0.2"])
        #expect(gen.status == 0, "\(gen.stderr)")
        let published = try Tool.mappack(
            ["publish", folder.join("src"), "--out", folder.join("cat"), "--chunked"], environment: ["MAPPACK_ZCK_CHUNK": "16384"])
        #expect(published.status == 0, "\(published.stderr)")
        let path = folder.join("cat/catalog.json")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let count = text.components(separatedBy: "\"chunkSize\":16384").count - 1
        #expect(count > 0 && count == text.components(separatedBy: "\"chunked\":{").count - 1, "\(text)")
        try Data("name: li\ncatalog: cat/catalog.json\nregions:\n  include: [europe/li]\n".utf8).write(
            to: URL(fileURLWithPath: folder.join("li.yaml")))
        for (field, from, to) in [
            ("chunkSize", "\"chunkSize\":16384", "\"chunkSize\":3000"), ("chunkSize", "\"chunkSize\":16384", "\"chunkSize\":0"),
            ("level", "\"level\":6", "\"level\":-1"), ("chunkSize", "\"chunkSize\":16384", "\"chunkSize\":1099511627776"),
        ] {
            try Data(text.replacingOccurrences(of: from, with: to).utf8).write(to: URL(fileURLWithPath: path))
            for arguments in [["regions", path], ["plan", folder.join("li.yaml")]] {
                let result = try Tool.mappack(arguments)
                #expect(result.status == 2, "\(to): \(result.stderr)")
                #expect(result.stderr.contains("chunked.\(field)") && result.stderr.contains("bundle sha256:"), "\(to): \(result.stderr)")
                #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("crashed"))
            }
        }
        // A flag that is not a boolean: the reader names where.
        try Data(text.replacingOccurrences(of: "\"sqlitePages\":true", with: "\"sqlitePages\":1").utf8).write(to: URL(fileURLWithPath: path))
        let flag = try Tool.mappack(["regions", path])
        #expect(flag.status == 2 && flag.stderr.contains(".chunked.sqlitePages: expected a boolean"), "\(flag.stderr)")
    }

    @Test func aPlainPublishHasNoChunkedField() throws {
        let folder = TemporaryFolder("plain-publish")
        #expect(try Tool.run(Tool.path("demo-world"), ["--out", folder.join("src"), "--only", "europe/li", "--scale", "0.2"]).status == 0)
        #expect(try Tool.mappack(["publish", folder.join("src"), "--out", folder.join("cat")]).status == 0)
        let text = try String(contentsOfFile: folder.join("cat/catalog.json"), encoding: .utf8)
        #expect(!text.contains("\"chunked\""))
    }
}
