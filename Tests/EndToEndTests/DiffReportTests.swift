import Foundation
import MapFormat
import TestSupport
import Testing

/// Issue 32 item 5: `mappack diff OLD NEW` names both sides and leads with the regions added,
/// removed and changed — in its text, `--json`, `--html` and `--markdown` — and lists no region
/// that did not change.
@Suite struct DiffReportTests {
    /// What a diff of two sides must say about their regions: region id → bundles on each side.
    struct Expected {
        let added: Set<String>
        let removed: Set<String>
        let changed: Set<String>
        let unchanged: Set<String>

        init(old: [String: Set<String>], new: [String: Set<String>]) {
            added = Set(new.keys).subtracting(old.keys)
            removed = Set(old.keys).subtracting(new.keys)
            changed = Set(new.keys.filter { old[$0] != nil && old[$0] != new[$0] })
            unchanged = Set(new.keys.filter { old[$0] == new[$0] })
        }
    }

    static func catalogRegions(_ path: String) throws -> (catalog: Catalog, regions: [String: Set<String>]) {
        let catalog = try JSONDecoder().decode(Catalog.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        return (catalog, Dictionary(uniqueKeysWithValues: catalog.regions.map { ($0.id.rawValue, Set($0.bundles.map(\.description))) }))
    }

    static func imageRegions(_ folder: String) throws -> (manifest: ImageManifest, regions: [String: Set<String>]) {
        let manifest = try ManifestReader.read(Data(contentsOf: URL(fileURLWithPath: folder + "/manifest.json")), file: "manifest.json")
        return (manifest, Dictionary(uniqueKeysWithValues: manifest.regions.map { ($0.id.rawValue, Set($0.bundles.map(\.description))) }))
    }

    /// Runs `diff old new` in every form and checks what each says. `oldWords` and `newWords` must
    /// all appear in the line that names that side.
    static func check(old: String, new: String, oldWords: [String], newWords: [String], expected: Expected, folder: TemporaryFolder, label: String)
        throws
    {
        #expect(
            !expected.added.isEmpty && !expected.removed.isEmpty && !expected.changed.isEmpty && !expected.unchanged.isEmpty, "\(label): \(expected)")

        // Text: both sides named first, then the region counts, then the rows, then bundles.
        let text = try Tool.mappack(["diff", old, new])
        #expect(text.status == 0, "\(label): \(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count > 4, "\(label): \(text.stdout)")
        let oldLine = lines.first ?? ""
        let newLine = lines.dropFirst().first ?? ""
        #expect(oldLine.hasPrefix("old: ") && oldWords.allSatisfy(oldLine.contains), "\(label): \(oldLine)")
        #expect(newLine.hasPrefix("new: ") && newWords.allSatisfy(newLine.contains), "\(label): \(newLine)")
        #expect(
            lines.dropFirst(2).first
                == "regions: \(expected.added.count) added, \(expected.removed.count) removed, \(expected.changed.count) changed, \(expected.unchanged.count) unchanged (not listed)",
            "\(label): \(text.stdout)")
        var rows: [String: Set<String>] = [:]
        var lastRow = 0
        for (index, line) in lines.enumerated() {
            let words = line.split(separator: " ")
            guard words.count >= 2, ["added", "removed", "changed"].contains(words[0]) else { continue }
            rows[String(words[0]), default: []].insert(String(words[1]))
            lastRow = index
        }
        #expect(rows["added"] == expected.added, "\(label): \(text.stdout)")
        #expect(rows["removed"] == expected.removed, "\(label): \(text.stdout)")
        #expect(rows["changed"] == expected.changed, "\(label): \(text.stdout)")
        let bundlesLine = try #require(lines.firstIndex { $0.hasPrefix("bundles: ") }, "\(label): \(text.stdout)")
        #expect(lastRow < bundlesLine, "\(label): the regions come before the bundles")
        for id in expected.unchanged {
            #expect(!lines.contains { $0.split(separator: " ").contains { $0 == id } }, "\(label): unchanged \(id) listed")
        }

        // JSON: the same lists, both sides described, the unchanged counted.
        let json = try Tool.mappack(["diff", old, new, "--json"])
        #expect(json.status == 0, "\(label): \(json.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(Set(object["regionsAdded"] as? [String] ?? []) == expected.added)
        #expect(Set(object["regionsRemoved"] as? [String] ?? []) == expected.removed)
        #expect(Set(object["regionsChanged"] as? [String] ?? []) == expected.changed)
        #expect(object["regionsUnchanged"] as? Int == expected.unchanged.count)
        let oldSide = try #require(object["old"] as? [String: Any], "\(label): \(json.stdout)")
        let newSide = try #require(object["new"] as? [String: Any], "\(label): \(json.stdout)")
        #expect(oldSide["path"] as? String == old && newSide["path"] as? String == new)
        let changes = try #require(object["changes"] as? [[String: Any]], "\(label): \(json.stdout)")
        let order = changes.map { $0["change"] as? String ?? "" }
        #expect(order == order.sorted { ["added", "removed", "changed"].firstIndex(of: $0)! < ["added", "removed", "changed"].firstIndex(of: $1)! })
        #expect(Set(changes.map { $0["id"] as? String ?? "" }) == expected.added.union(expected.removed).union(expected.changed))
        for change in changes where change["change"] as? String != "changed" {
            #expect((change["bytes"] as? Int64 ?? 0) > 0, "\(label): \(change)")
        }

        // HTML: title names both sides; the change tables come before the treemap; no unchanged row.
        let page = folder.join("\(label).html")
        let markdown = folder.join("\(label).md")
        let reports = try Tool.mappack(["diff", old, new, "--html", page, "--markdown", markdown])
        #expect(reports.status == 0, "\(label): \(reports.stderr)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        let title = try #require(html.firstMatch(of: /<h1>([^<]*)<\/h1>/)).1
        #expect(oldWords.filter { !$0.contains("/") }.allSatisfy(title.contains), "\(label): \(title)")
        #expect(newWords.filter { !$0.contains("/") }.allSatisfy(title.contains), "\(label): \(title)")
        let positions = ["<section id=\"added\"", "<section id=\"removed\"", "<section id=\"changed\"", "<section id=\"treemap-download\""].map {
            html.range(of: $0)?.lowerBound
        }
        #expect(positions.allSatisfy { $0 != nil } && positions.map { $0! } == positions.map { $0! }.sorted(), "\(label): sections out of order")
        for (change, ids) in [("added", expected.added), ("removed", expected.removed), ("changed", expected.changed)] {
            let listed = Set(
                html.matches(of: try Regex("<tr data-change=\"\(change)\" data-region=\"([^\"]+)\"")).map { String($0.output[1].substring!) })
            #expect(listed == ids, "\(label): \(change) rows \(listed.sorted()), expected \(ids.sorted())")
        }
        #expect(!html.contains("<li data-region="), "\(label): the page lists every region")
        #expect(html.components(separatedBy: "<p class=\"legend\">").count == 2, "\(label): one legend")
        #expect(html.contains("\(expected.unchanged.count) regions unchanged"), "\(label)")
        // The treemap is grouped by top-level region and country, and names what it can.
        #expect(html.contains("<g data-group=\"europe\""), "\(label): no group per top-level region")
        #expect(html.contains("<g data-group=\"europe/ch\""), "\(label): no group per country")
        let treemap = html[html.range(of: "<section id=\"treemap-download\"")!.lowerBound...]
        #expect(treemap.contains("<text"), "\(label): no label in the treemap")
        let data = try ReportTests.embedded(html)
        #expect(data["format"] as? String == "mappack-report/1" && data["kind"] as? String == "diff")
        let embeddedChanges = try #require(data["changes"] as? [[String: Any]], "\(label): no changes in the report data")
        #expect(embeddedChanges.count == changes.count)

        // Markdown: both sides named, a row per added, removed and changed region only.
        let summary = try String(contentsOfFile: markdown, encoding: .utf8)
        let heading = summary.split(separator: "\n").first ?? ""
        #expect(heading.hasPrefix("### "), "\(label): \(summary)")
        #expect(
            oldWords.filter { !$0.contains("/") }.allSatisfy(heading.contains) && newWords.filter { !$0.contains("/") }.allSatisfy(heading.contains))
        #expect(summary.contains("| region | name | change |"), "\(label): \(summary)")
        var markdownRows: [String: Set<String>] = [:]
        for match in summary.matches(of: /\n\| `([^`]+)` \| [^|]* \| (added|removed|changed) \|/) {
            markdownRows[String(match.2), default: []].insert(String(match.1))
        }
        #expect(markdownRows["added"] == expected.added, "\(label): \(summary)")
        #expect(markdownRows["removed"] == expected.removed, "\(label): \(summary)")
        #expect(markdownRows["changed"] == expected.changed, "\(label): \(summary)")
        for id in expected.unchanged { #expect(!summary.contains("`\(id)`"), "\(label): unchanged \(id) in the Markdown") }
    }

    @Test func diffNamesBothSidesAndLeadsWithTheRegionsAddedRemovedAndChanged() throws {
        let folder = TemporaryFolder("diff-report")
        // The old world has Switzerland and Austria, the new one Switzerland (partly changed) and
        // Liechtenstein: Liechtenstein's regions are added, Austria's removed.
        let oldCatalog = try DemoWorldFixture.publish(in: folder, only: "europe/ch,europe/at", scale: 0.1, mapVersion: "2026.11.0")
        let newCatalog = try DemoWorldFixture.publish(
            in: folder, only: "europe/ch,europe/li", scale: 0.1, mapVersion: "2026.12.0", baseVersion: "2026.11.0", changeFraction: 0.3)
        let (catalog, oldRegions) = try Self.catalogRegions(oldCatalog)
        let newRegions = try Self.catalogRegions(newCatalog).regions
        try Self.check(
            old: oldCatalog, new: newCatalog, oldWords: ["catalog", catalog.catalog, "2026.11.0", oldCatalog],
            newWords: ["catalog", catalog.catalog, "2026.12.0", newCatalog], expected: Expected(old: oldRegions, new: newRegions),
            folder: folder, label: "catalogs")

        for (version, catalog, countries) in [("2026.11.0", oldCatalog, "europe/ch, europe/at"), ("2026.12.0", newCatalog, "europe/ch, europe/li")] {
            let recipe = folder.join("alps-\(version).yaml")
            try "name: alps\ncatalog: \(catalog)\nregions:\n  include: [\(countries)]\n".write(toFile: recipe, atomically: true, encoding: .utf8)
            let build = try Tool.mappack(["build", recipe, "--cache", folder.join("cache"), "--out", folder.join("Output")])
            #expect(build.status == 0, "\(build.stderr)")
        }
        let oldImage = folder.join("Output/alps-2026.11.0")
        let newImage = folder.join("Output/alps-2026.12.0")
        let (oldManifest, oldImageRegions) = try Self.imageRegions(oldImage)
        let (newManifest, newImageRegions) = try Self.imageRegions(newImage)
        try Self.check(
            old: oldImage, new: newImage, oldWords: ["image", "alps", "2026.11.0", String(oldManifest.imageID.prefix(12))],
            newWords: ["image", "alps", "2026.12.0", String(newManifest.imageID.prefix(12))],
            expected: Expected(old: oldImageRegions, new: newImageRegions), folder: folder, label: "images")
    }
}
