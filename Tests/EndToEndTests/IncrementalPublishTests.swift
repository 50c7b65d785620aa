import Foundation
import MapIO
import TestSupport
import Testing

/// `mappack publish --previous` (issue 33, item 4): bundles whose source is unchanged are copied
/// from the previous publish, checked against their SHA-256, and the output is the full publish's,
/// byte for byte.
@Suite struct IncrementalPublishTests {
    /// Two versions of a small world where about 8% of the bundles changed (12 of 151).
    private struct Versions {
        let folder = TemporaryFolder("incremental-publish")
        let unchanged: [String]
        let total: Int

        init() throws {
            let only = ["--only", "europe/ch,europe/li,europe/at", "--scale", "0.1"]
            let first = try Tool.run(Tool.path("demo-world"), ["--out", folder.join("src1")] + only)
            #expect(first.status == 0, "\(first.stderr)")
            let second = try Tool.run(
                Tool.path("demo-world"),
                ["--out", folder.join("src2"), "--map-version", "2026.12.0", "--base-version", "2026.11.0", "--change-fraction", "0.15"] + only)
            #expect(second.status == 0, "\(second.stderr)")
            let (old, new) = (folder.join("src1/bundles/"), folder.join("src2/bundles/"))
            let names = try FileManager.default.contentsOfDirectory(atPath: new).sorted()
            unchanged = try names.filter { name in
                try IncrementalPublishTests.files(under: old + name) == IncrementalPublishTests.files(under: new + name)
            }
            total = names.count
        }

        func join(_ path: String) -> String { folder.join(path) }
    }

    /// Every file under `root` by relative path, with its bytes.
    static func files(under root: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        guard let walker = FileManager.default.enumerator(atPath: root) else { return out }
        for case let relative as String in walker {
            var isFolder: ObjCBool = false
            if unsafe FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isFolder), !isFolder.boolValue {
                out[relative] = try Data(contentsOf: URL(fileURLWithPath: root + "/" + relative))
            }
        }
        return out
    }

    /// Every byte of both folders, file by file, named in the failure.
    static func expectSameBytes(_ left: String, _ right: String) throws {
        let a = try files(under: left)
        let b = try files(under: right)
        #expect(a.keys.sorted() == b.keys.sorted(), "files differ between \(left) and \(right)")
        for (path, bytes) in a where b[path] != bytes { Issue.record("\(path) differs between \(left) and \(right)") }
        #expect(!a.isEmpty)
    }

    /// The `published` event of a `--json` publish.
    static func published(_ result: Tool.Result) throws -> [String: Any] {
        let line = try #require(result.stdout.split(separator: "\n").last { $0.contains("\"published\"") }, "\(result.stdout)")
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test(arguments: [false, true])
    func aPublishWithPreviousIsByteIdenticalToAFullOne(chunked: Bool) throws {
        let versions = try Versions()
        #expect(versions.unchanged.count > versions.total * 85 / 100 && versions.unchanged.count < versions.total, "\(versions.unchanged.count)")
        let key = try Tool.mappack(["keygen", "--out", versions.join("release")])
        #expect(key.status == 0, "\(key.stderr)")
        let extra = (chunked ? ["--chunked"] : []) + ["--sign", versions.join("release.key"), "--json"]
        let clock = ["SOURCE_DATE_EPOCH": "1790000000"]
        let first = try Tool.mappack(["publish", versions.join("src1"), "--out", versions.join("v1")] + extra, environment: clock)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try Self.published(first)["reused"] as? Int == 0)
        let full = try Tool.mappack(["publish", versions.join("src2"), "--out", versions.join("v2-full")] + extra, environment: clock)
        #expect(full.status == 0, "\(full.stderr)")
        let incremental = try Tool.mappack(
            ["publish", versions.join("src2"), "--out", versions.join("v2-incremental"), "--previous", versions.join("v1")] + extra,
            environment: clock)
        #expect(incremental.status == 0, "\(incremental.stderr)")
        // Every unchanged bundle was copied (two names with one content are one bundle), none packed twice.
        let reused = try #require(try Self.published(incremental)["reused"] as? Int)
        #expect(reused > 0 && reused <= versions.unchanged.count, "\(reused) of \(versions.unchanged.count)")
        #expect(try Self.published(full)["reused"] as? Int == 0)
        try Self.expectSameBytes(versions.join("v2-full"), versions.join("v2-incremental"))
        // Reused bundles are copies, not hard links to the previous ones (issue 41: an in-place edit of
        // the previous publish's file changed this one too): an edit of one leaves the other intact.
        let bundles = versions.join("v2-incremental/bundles")
        let files = (FileManager.default.subpaths(atPath: bundles) ?? []).filter { $0.hasSuffix(".tar.zst") }
        let linked = try files.filter { path in
            try FileManager.default.attributesOfItem(atPath: bundles + "/" + path)[.referenceCount] as? Int ?? 1 >= 2
        }
        #expect(linked.isEmpty, "\(linked.count) reused bundles are links")
        let shared = try #require(files.first { FileManager.default.fileExists(atPath: versions.join("v1/bundles/") + $0) })
        let before = try Data(contentsOf: URL(fileURLWithPath: bundles + "/" + shared))
        let original = try Data(contentsOf: URL(fileURLWithPath: versions.join("v1/bundles/") + shared))
        // An in-place edit (as `dd conv=notrunc` does) of the previous publish's file.
        let handle = try #require(FileHandle(forUpdatingAtPath: versions.join("v1/bundles/") + shared))
        try handle.seek(toOffset: 10)
        try handle.write(contentsOf: Data([0xFF, 0xFF]))
        try handle.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: bundles + "/" + shared)) == before, "editing v1's bundle changed v2's")
        try original.write(to: URL(fileURLWithPath: versions.join("v1/bundles/") + shared))
        // The same through the previous catalog's path, and without --previous over the previous folder itself.
        try FileManager.default.copyItem(atPath: versions.join("v1"), toPath: versions.join("v2-over-v1"))
        let byFile = try Tool.mappack(
            ["publish", versions.join("src2"), "--out", versions.join("v2-by-file"), "--previous", versions.join("v1/catalog.json")] + extra,
            environment: clock)
        #expect(byFile.status == 0, "\(byFile.stderr)")
        #expect(try Self.published(byFile)["reused"] as? Int == reused)
        try Self.expectSameBytes(versions.join("v2-full"), versions.join("v2-by-file"))
        let over = try Tool.mappack(["publish", versions.join("src2"), "--out", versions.join("v2-over-v1")] + extra, environment: clock)
        #expect(over.status == 0, "\(over.stderr)")
        #expect(try Self.published(over)["reused"] as? Int == reused)
        // Published over v1, whose signature and timestamp it follows: only those two differ from the full publish.
        let overFiles = try Self.files(under: versions.join("v2-over-v1"))
        let fullFiles = try Self.files(under: versions.join("v2-full"))
        #expect(overFiles.keys.sorted() == fullFiles.keys.sorted())
        for (path, bytes) in fullFiles where overFiles[path] != bytes && !path.hasSuffix(".sig") && !path.hasSuffix(".timestamp") {
            Issue.record("\(path) differs between a full publish and one over the previous folder")
        }
    }

    @Test func aTamperedPreviousBundleIsPackedAfreshAndNamed() throws {
        let versions = try Versions()
        let first = try Tool.mappack(["publish", versions.join("src1"), "--out", versions.join("v1")])
        #expect(first.status == 0, "\(first.stderr)")
        let full = try Tool.mappack(["publish", versions.join("src2"), "--out", versions.join("v2-full")])
        #expect(full.status == 0, "\(full.stderr)")
        // One byte of an unchanged bundle's file in v1, its length kept.
        let victim = try #require(versions.unchanged.first)
        let copy = try Tool.mappack(["publish", versions.join("src1"), "--out", versions.join("probe"), "--json"])
        #expect(copy.status == 0, "\(copy.stderr)")
        let record = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: versions.join("v1/publish-record.json"))))
                as? [String: Any])
        let sources = try #require(record["sources"] as? [String: String])
        let digests = Set(sources.values)
        #expect(digests.count <= versions.total)
        let victimFiles = try Self.files(under: versions.join("src1/bundles/" + victim))
        // Find the victim's bundle: the one whose tar lists its files (they are unique to it).
        let victimDigest = try #require(
            try digests.first { digest in
                let hex = String(digest.dropFirst("sha256:".count))
                let listing = try Tool.run("/usr/bin/tar", ["--zstd", "-tf", versions.join("v1/bundles/\(hex.prefix(2))/\(hex).tar.zst")])
                return Set(listing.stdout.split(separator: "\n").map(String.init)).isSuperset(of: victimFiles.keys)
            })
        let hex = String(victimDigest.dropFirst("sha256:".count))
        let path = versions.join("v1/bundles/\(hex.prefix(2))/\(hex).tar.zst")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[bytes.count / 2] ^= 0x5A
        try bytes.write(to: URL(fileURLWithPath: path))
        let incremental = try Tool.mappack(
            ["publish", versions.join("src2"), "--out", versions.join("v2-incremental"), "--previous", versions.join("v1"), "--json"])
        #expect(incremental.status == 0, "\(incremental.stderr)")
        #expect(
            incremental.stderr.contains("bundle '\(victim)'") && incremental.stderr.contains(hex) && incremental.stderr.contains("damaged"),
            "\(incremental.stderr)")
        let withoutTamper = try Tool.mappack(
            ["publish", versions.join("src2"), "--out", versions.join("v2-reference"), "--previous", versions.join("probe"), "--json"])
        let reused = try #require(try Self.published(incremental)["reused"] as? Int)
        #expect(reused == (try Self.published(withoutTamper)["reused"] as? Int ?? 0) - 1)
        try Self.expectSameBytes(versions.join("v2-full"), versions.join("v2-incremental"))
    }

    /// An edited `publish-record.json` that maps two unchanged sources to each other's genuine bundles
    /// (issue 41, attack 10): the reuse is proven against the source's files, not asserted, so both are
    /// packed afresh, named, and the publish equals a full one.
    @Test func anEditedRecordCannotPutOneSourcesBundleUnderAnother() throws {
        let versions = try Versions()
        #expect(try Tool.mappack(["publish", versions.join("src1"), "--out", versions.join("v1")]).status == 0)
        #expect(try Tool.mappack(["publish", versions.join("src2"), "--out", versions.join("v2-full")]).status == 0)
        let recordURL = URL(fileURLWithPath: versions.join("v1/publish-record.json"))
        var record = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: recordURL)) as? [String: Any])
        var sources = try #require(record["sources"] as? [String: String])
        // Two sources whose bundles differ: their bundles swapped in the record.
        let keys = sources.keys.sorted()
        let first = try #require(keys.first)
        let second = try #require(keys.first { sources[$0] != sources[first] })
        (sources[first], sources[second]) = (sources[second], sources[first])
        record["sources"] = sources
        try JSONSerialization.data(withJSONObject: record, options: [.sortedKeys, .withoutEscapingSlashes]).write(to: recordURL)
        let incremental = try Tool.mappack(
            ["publish", versions.join("src2"), "--out", versions.join("v2-incremental"), "--previous", versions.join("v1"), "--json"])
        #expect(incremental.status == 0, "\(incremental.stderr)")
        #expect(incremental.stderr.contains("does not hold the files of source bundle"), "\(incremental.stderr)")
        try Self.expectSameBytes(versions.join("v2-full"), versions.join("v2-incremental"))
    }

    @Test func aBadPreviousIsRefusedNamingThePath() throws {
        let versions = try Versions()
        let other = try Tool.run(
            Tool.path("demo-world"), ["--out", versions.join("other-src"), "--only", "europe/li", "--scale", "0.1", "--catalog", "other-maps"])
        #expect(other.status == 0, "\(other.stderr)")
        #expect(try Tool.mappack(["publish", versions.join("other-src"), "--out", versions.join("other")]).status == 0)
        try FileManager.default.createDirectory(atPath: versions.join("empty"), withIntermediateDirectories: true)
        try Data("not json".utf8).write(to: URL(fileURLWithPath: versions.join("garbage.json")))
        for (previous, words) in [
            (versions.join("missing"), "no such file"), (versions.join("empty"), "not a published catalog"),
            (versions.join("garbage.json"), "not a published catalog"), (versions.join("other"), "catalog 'other-maps', not 'demo-world'"),
        ] {
            let result = try Tool.mappack(["publish", versions.join("src2"), "--out", versions.join("v2"), "--previous", previous])
            #expect(result.status == 2, "\(previous): \(result.stderr)")
            #expect(result.stderr.contains(previous) && result.stderr.contains(words), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: versions.join("v2")))
        }
        // Over a folder of another catalog, nothing is reused and nothing is refused: it is simply replaced.
        let over = try Tool.mappack(["publish", versions.join("src2"), "--out", versions.join("other"), "--json"])
        #expect(over.status == 0, "\(over.stderr)")
        #expect(try Self.published(over)["reused"] as? Int == 0)
    }
}
