import Foundation
import TestSupport
import Testing

@Suite struct BuildFromTests {
    @Test func buildFromOldImageReusesUnchangedBundlesAndEqualsACleanBuild() throws {
        let folder = TemporaryFolder("from")
        for version in ["2026.11.0", "2026.12.0"] {
            let gen = try Tool.run(
                Tool.path("demo-world"),
                [
                    "--out", folder.join("src-\(version)"), "--only", "europe/ch", "--scale", "0.2",
                    "--map-version", version, "--base-version", "2026.11.0", "--change-fraction", "0.2",
                ])
            #expect(gen.status == 0, "\(gen.stderr)")
            #expect(try Tool.mappack(["publish", folder.join("src-\(version)"), "--out", folder.join("cat-\(version)")]).status == 0)
            let recipe =
                "name: ch\ncatalog: cat-\(version)/catalog.json\nregions:\n  include: [europe/ch]\noutput:\n  formats: [directory, tar.zst]\n"
            try Data(recipe.utf8).write(to: URL(fileURLWithPath: folder.join("ch-\(version).yaml")))
        }
        let env = ["SOURCE_DATE_EPOCH": "1790000000"]
        let old = try Tool.mappack(
            ["build", folder.join("ch-2026.11.0.yaml"), "--cache", folder.join("cache-old"), "--out", folder.join("old")], environment: env)
        #expect(old.status == 0, "\(old.stderr)")
        let clean = try Tool.mappack(
            ["build", folder.join("ch-2026.12.0.yaml"), "--cache", folder.join("cache-clean"), "--out", folder.join("clean")], environment: env)
        #expect(clean.status == 0, "\(clean.stderr)")
        let reused = try Tool.mappack(
            [
                "build", folder.join("ch-2026.12.0.yaml"), "--cache", folder.join("cache-new"), "--out", folder.join("reused"),
                "--from", folder.join("old/ch-2026.11.0"), "--json",
            ], environment: env)
        #expect(reused.status == 0, "\(reused.stderr)")

        let events = reused.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let fetched = events.filter { $0["event"] as? String == "bundle-verified" }.count
        let reusedCount = events.filter { $0["event"] as? String == "bundle-reused" }.count
        let source =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder.join("src-2026.12.0/source.json")))) as! [String: Any]
        let changed = (source["changed"] as! [String]).count
        #expect(changed > 0)
        #expect(fetched == changed, "fetched \(fetched), changed \(changed)")
        #expect(reusedCount > 0)
        // What was fetched, not the plan's total (issue 19 item 7).
        let verifiedBytes = events.filter { $0["event"] as? String == "bundle-verified" }.compactMap { ($0["size"] as? NSNumber)?.int64Value }.reduce(
            0, +)
        let done = try #require(events.first { $0["event"] as? String == "done" })
        #expect((done["downloadedBytes"] as? NSNumber)?.int64Value == verifiedBytes, "\(done)")
        #expect(verifiedBytes > 0)

        #expect(
            try Data(contentsOf: URL(fileURLWithPath: folder.join("clean/ch-2026.12.0.tar.zst")))
                == Data(contentsOf: URL(fileURLWithPath: folder.join("reused/ch-2026.12.0.tar.zst"))))
        #expect(try Tool.run("/usr/bin/diff", ["-r", folder.join("clean/ch-2026.12.0"), folder.join("reused/ch-2026.12.0")]).status == 0)
    }
}
