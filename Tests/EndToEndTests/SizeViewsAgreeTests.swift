import Foundation
import MapFormat
import TestSupport
import Testing

/// Issue 32 item 3: one plan, one set of numbers, whichever view shows it — `plan`'s text, its
/// `--json`, `--html` and `--markdown`, `regions`, and the build's events and lines.
@Suite struct SizeViewsAgreeTests {
    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not one JSON object: \(text)")
    }

    static func lines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    static func int(_ value: Any?) -> Int64? { (value as? NSNumber)?.int64Value }

    /// The cells of the Markdown rows whose first cell is `` `id` ``, by id, and the summary rows, by label.
    static func markdown(_ text: String) -> (summary: [String: String], regions: [String: [String]]) {
        var summary: [String: String] = [:]
        var regions: [String: [String]] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| ") {
            let cells = line.dropFirst(2).dropLast(2).components(separatedBy: " | ")
            if let first = cells.first, first.hasPrefix("`"), first.hasSuffix("`") {
                regions[String(first.dropFirst().dropLast())] = Array(cells.dropFirst(2))
            } else if cells.count == 2, !cells[0].isEmpty, cells[0] != "---" {
                summary[cells[0]] = cells[1]
            }
        }
        return (summary, regions)
    }

    @Test func planTextJSONReportsRegionsAndTheBuildShowTheSameSizes() throws {
        let world = try PublishedWorld()
        // europe/ch: its cantons Bern and Zürich share a border bundle; the cache seed adds `world`.
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let page = world.folder.join("plan.html")
        let summary = world.folder.join("plan.md")
        let text = try Tool.mappack(["plan", recipe, "--cache", world.cache, "--html", page, "--markdown", summary])
        #expect(text.status == 0, "\(text.stderr)")
        let json = try Tool.mappack(["plan", recipe, "--cache", world.cache, "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let planned = try Self.object(json.stdout)
        let listed = try Tool.mappack(["regions", world.catalog, "--json", "--block-size", "4096"])
        let catalogRows = Dictionary(uniqueKeysWithValues: Self.lines(listed.stdout).map { ($0["id"] as! String, $0) })
        let markdown = Self.markdown(try String(contentsOfFile: summary, encoding: .utf8))
        let html = try String(contentsOfFile: page, encoding: .utf8)

        // Per region: the plan's text and JSON, `regions`, the Markdown table and the HTML tree.
        let regions = try #require(planned["regions"] as? [[String: Any]])
        #expect(regions.count == 4)
        for region in regions {
            let id = region["id"] as! String
            let onDisk = try #require(Self.int(region["sizeOnDiskInBytes"]), "\(region)")
            let download = try #require(Self.int(region["downloadBytes"]), "plan --json gives no download size of \(id)")
            #expect(Self.int(catalogRows[id]?["sizeOnDiskInBytes"]) == onDisk, "\(id): regions and plan disagree on disk")
            #expect(Self.int(catalogRows[id]?["downloadBytes"]) == download, "\(id): regions and plan disagree on download")
            let row = try #require(text.stdout.split(separator: "\n").first { $0.hasPrefix("  \(id) ") }, "\(text.stdout)")
            #expect(row.contains(" \(ByteCount.format(onDisk)) "), "\(row)")
            #expect(
                markdown.regions[id] == [ByteCount.format(onDisk), ByteCount.format(download)],
                "\(id): Markdown \(markdown.regions[id] ?? []) but the plan says \(ByteCount.format(onDisk)) on disk, \(ByteCount.format(download)) download"
            )
            let item = try #require(html.firstMatch(of: try Regex("<li data-region=\"\(id)\"[^\n]*")), "\(id) not in the page")
            #expect(
                item.0.contains("on disk \(ByteCount.format(onDisk)) ") && item.0.contains(ByteCount.format(download)),
                "\(id): page says \(item.0)")
        }
        // The border bundle counts under both cantons, and once in Switzerland.
        #expect(markdown.regions["europe/ch/zh"]?.first == ByteCount.format(4096 + 12288 + 4096))

        // The totals: every line of the reports' summary is a line of the text plan.
        #expect(!markdown.summary.isEmpty)
        for (label, value) in markdown.summary where label != "recipe" {
            #expect(text.stdout.contains("\(label): \(value)\n"), "the Markdown says '\(label): \(value)', the plan:\n\(text.stdout)")
            #expect(html.contains("<tr><th>\(label)</th><td>\(value)</td></tr>"), "the page lacks '\(label): \(value)'")
        }
        let storeBytes = try #require(Self.int(planned["storeBundleBytes"]), "plan --json gives no store bundle bytes")
        let seedBytes = try #require(Self.int(planned["cacheSeedBundleBytes"]), "plan --json gives no cache seed bundle bytes")
        #expect(seedBytes > 0 && storeBytes + seedBytes == Self.int(planned["totalBundleBytes"]))
        let downloadBytes = try #require(Self.int(planned["downloadBytes"]))
        #expect(downloadBytes == storeBytes + seedBytes, "nothing is cached yet")
        #expect(text.stdout.contains("download: \(ByteCount.format(downloadBytes)) (\(downloadBytes) bytes)"), "\(text.stdout)")
        // The treemaps hold the store's bundles; their titles say so and add up to the plan's.
        #expect(html.contains("data-measure=\"download\" data-total=\"\(storeBytes)\""))
        #expect(html.contains("data-measure=\"onDisk\" data-total=\"\(Self.int(planned["sizeOnDiskInBytes"]) ?? -1)\""))
        #expect(html.contains("Where the bytes go: store bundles, download (compressed), \(ByteCount.format(storeBytes))"))

        // The build plans, fetches and reports the same bytes.
        let build = try world.build(recipe, ["--json"])
        #expect(build.status == 0, "\(build.stderr)")
        let events = Self.lines(build.stdout)
        let plannedEvent = try #require(events.first { $0["event"] as? String == "planned" })
        #expect(Self.int(plannedEvent["downloadBytes"]) == downloadBytes)
        #expect(plannedEvent["bundles"] as? Int == planned["bundles"] as? Int)
        let verified = events.filter { $0["event"] as? String == "bundle-verified" }.compactMap { Self.int($0["size"]) }.reduce(0, +)
        #expect(verified == downloadBytes)
        let done = try #require(events.first { $0["event"] as? String == "done" })
        #expect(Self.int(done["downloadedBytes"]) == downloadBytes)
        #expect(Self.int(done["sizeOnDiskInBytes"]) == Self.int(planned["sizeOnDiskInBytes"]))
        // With everything cached, a plan says so in every view.
        let again = try Tool.mappack(["plan", recipe, "--cache", world.cache, "--markdown", "-"])
        #expect(again.stdout.contains("download: 0 B (0 bytes)"), "\(again.stdout)")
        #expect(again.stdout.contains("| download | 0 B (0 bytes)"), "\(again.stdout)")
    }

    /// `build --from` plans only what it will fetch, and says the download cache holds the rest
    /// only when it does.
    @Test func buildFromPlansTheBytesItFetches() throws {
        let world = try PublishedWorld()
        let recipe = try world.recipe(SourceFixture.recipe(catalog: world.catalog))
        let old = try world.build(recipe)
        #expect(old.status == 0, "\(old.stderr)")
        try FileManager.default.moveItem(atPath: world.out + "/fixture-1.0", toPath: world.folder.join("old-image"))
        // 1.1 changes Zürich's bundle only; a fresh cache holds nothing.
        try SourceFixture.write(to: world.folder.join("source-1.1"), mapVersion: "1.1", changed: ["ch.zh"])
        let published = try Tool.mappack(["publish", world.folder.join("source-1.1"), "--out", world.folder.join("catalog-1.1")])
        #expect(published.status == 0, "\(published.stderr)")
        let newer = try world.recipe(
            SourceFixture.recipe(catalog: world.folder.join("catalog-1.1/catalog.json")).replacingOccurrences(of: "\"1.0\"", with: "\"1.1\""),
            name: "newer.yaml")
        let arguments = ["build", newer, "--from", world.folder.join("old-image")]
        let json = try Tool.mappack(
            arguments + ["--cache", world.folder.join("cache-json"), "--out", world.folder.join("out-json"), "--json"],
            environment: ["SOURCE_DATE_EPOCH": "1790000000"])
        #expect(json.status == 0, "\(json.stderr)")
        let events = Self.lines(json.stdout)
        let verified = events.filter { $0["event"] as? String == "bundle-verified" }.compactMap { Self.int($0["size"]) }.reduce(0, +)
        #expect(events.contains { $0["event"] as? String == "bundle-reused" })
        let plannedEvent = try #require(events.first { $0["event"] as? String == "planned" })
        #expect(verified > 0 && Self.int(plannedEvent["downloadBytes"]) == verified, "planned \(plannedEvent), fetched \(verified) bytes")

        let text = try Tool.mappack(
            arguments + ["--cache", world.folder.join("cache-text"), "--out", world.folder.join("out-text")],
            environment: ["SOURCE_DATE_EPOCH": "1790000000"])
        #expect(text.status == 0, "\(text.stderr)")
        let fetchLine = try #require(text.stderr.split(separator: "\n").first { $0.hasPrefix("fetch: ") }, "\(text.stderr)")
        #expect(fetchLine.contains("\(ByteCount.format(verified)) to download"), "\(fetchLine)")
        #expect(!fetchLine.contains("download cache"), "the cache is empty: \(fetchLine)")
    }
}
