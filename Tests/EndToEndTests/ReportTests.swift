import Foundation
import TestSupport
import Testing

/// `--html` and `--markdown` of `plan`, `inspect` and `diff`: a self-contained page rendered by
/// headless Chromium (Debian's `chromium`), checked for being drawn (not blank) and for its data
/// (the DOM after rendering), and a Markdown summary for CI job pages.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"), "needs Debian's chromium (make deps)"))
struct ReportTests {
    /// Two published versions of a small demo world, with images built from both.
    struct Worlds {
        let folder = TemporaryFolder("report")

        init() throws {
            for version in ["2026.11.0", "2026.12.0"] {
                let catalog = try DemoWorldFixture.publish(
                    in: folder, only: "europe/ch,europe/at", scale: 0.2, mapVersion: version,
                    baseVersion: "2026.11.0", changeFraction: 0.3)
                try """
                name: alps
                catalog: \(catalog)
                regions:
                  include: [europe/ch, europe/at]
                """.write(toFile: recipe(version), atomically: true, encoding: .utf8)
            }
        }

        func recipe(_ version: String) -> String { folder.join("alps-\(version).yaml") }
        var cache: String { folder.join("cache") }
        var out: String { folder.join("Output") }
    }

    /// Renders `page` in headless Chromium: the DOM after rendering, and a screenshot's statistics.
    static func render(_ page: String, screenshot: String) throws -> (dom: String, colours: Int, nonWhite: Double) {
        let common = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1100,1400"]
        let shot = try Tool.run("/usr/bin/chromium", common + ["--screenshot=\(screenshot)", "file://\(page)"])
        #expect(FileManager.default.fileExists(atPath: screenshot), "\(shot.stderr)")
        let dom = try Tool.run("/usr/bin/chromium", common + ["--dump-dom", "file://\(page)"])
        #expect(dom.status == 0, "\(dom.stderr)")
        let stats = try Tool.run("/usr/bin/python3", [Tool.repositoryRoot + "/Tests/Support/png_stats.py", screenshot])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any], "\(stats.stderr)")
        return (dom.stdout, object["colours"] as? Int ?? 0, object["nonWhite"] as? Double ?? 0)
    }

    /// Every `data-bytes` of the treemap rectangles of `measure` in the rendered DOM, summed.
    static func treemapBytes(_ dom: String, measure: String) throws -> (sum: Int64, total: Int64, rects: Int) {
        let section = try #require(dom.range(of: "<section id=\"treemap-\(measure)\">"), "no treemap of \(measure)")
        let rest = dom[section.upperBound...]
        let body = rest[..<(rest.range(of: "</section>")?.lowerBound ?? rest.endIndex)]
        let total = Int64(try #require(body.firstMatch(of: /data-total="(\d+)"/)).1) ?? -1
        var sum: Int64 = 0
        var count = 0
        for match in body.matches(of: /<rect [^>]*data-kind="[^"]*" data-bytes="(\d+)"/) {
            sum += Int64(match.1) ?? 0
            count += 1
        }
        return (sum, total, count)
    }

    /// The report's embedded data, as the page carries it.
    static func embedded(_ dom: String) throws -> [String: Any] {
        let match = try #require(dom.firstMatch(of: /<script type="application\/json" id="report-data">(.*?)<\/script>/.dotMatchesNewlines()))
        let text = String(match.1).replacingOccurrences(of: "<\\/", with: "</")
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func planPageIsDrawnAndItsNumbersAreThePlans() throws {
        let worlds = try Worlds()
        let page = worlds.folder.join("plan.html")
        let plan = try Tool.mappack(["plan", worlds.recipe("2026.11.0"), "--cache", worlds.cache, "--html", page])
        #expect(plan.status == 0, "\(plan.stderr)")
        let json = try Tool.mappack(["plan", worlds.recipe("2026.11.0"), "--cache", worlds.cache, "--json"])
        let planned = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])

        let screenshot = ProcessInfo.processInfo.environment["MAPPACK_REPORT_SCREENSHOT"] ?? worlds.folder.join("plan.png")
        let rendered = try Self.render(page, screenshot: screenshot)
        // A drawn treemap: many colours and a good share of the page inked (a blank page has one colour).
        #expect(rendered.colours > 20 && rendered.nonWhite > 0.15, "colours \(rendered.colours), inked \(rendered.nonWhite)")
        // The download treemap adds up to the plan's compressed bytes; on disk to its size on disk.
        let download = try Self.treemapBytes(rendered.dom, measure: "download")
        #expect(download.sum == download.total && download.total == planned["totalBundleBytes"] as? Int64)
        let onDisk = try Self.treemapBytes(rendered.dom, measure: "onDisk")
        #expect(onDisk.sum == onDisk.total && onDisk.rects > 30)
        let data = try Self.embedded(rendered.dom)
        #expect(data["format"] as? String == "mappack-report/1")
        #expect((data["regions"] as? [Any])?.count == (planned["regions"] as? [Any])?.count)
        #expect(rendered.dom.matches(of: /<li data-region="/).count == (planned["regions"] as? [Any])?.count)
        // No network: nothing on the page points outside it.
        let html = try String(contentsOfFile: page, encoding: .utf8)
        let withoutNamespace = html.replacingOccurrences(of: "xmlns=\"http://www.w3.org/2000/svg\"", with: "")
        #expect(!withoutNamespace.contains("http://") && !withoutNamespace.contains("https://"), "only the SVG namespace may name a URL")
        #expect(!html.contains("<link") && !html.contains("src="))
    }

    @Test func inspectAndDiffPagesShowTheImageAndWhatADeviceDownloads() throws {
        let worlds = try Worlds()
        for version in ["2026.11.0", "2026.12.0"] {
            let build = try Tool.mappack(["build", worlds.recipe(version), "--cache", worlds.cache, "--out", worlds.out])
            #expect(build.status == 0, "\(build.stderr)")
        }
        let old = worlds.out + "/alps-2026.11.0"
        let new = worlds.out + "/alps-2026.12.0"
        let page = worlds.folder.join("inspect.html")
        #expect(try Tool.mappack(["inspect", old, "--html", page]).status == 0)
        let inspected = try Self.render(page, screenshot: worlds.folder.join("inspect.png"))
        #expect(inspected.colours > 20)
        let inspectJSON = try #require(
            try JSONSerialization.jsonObject(with: Data(Tool.mappack(["inspect", old, "--json"]).stdout.utf8)) as? [String: Any])
        let regions = try #require(inspectJSON["regions"] as? [[String: Any]])
        let roots = ["europe/ch", "europe/at"].compactMap { id in regions.first { $0["id"] as? String == id }?["sizeOnDiskInBytes"] as? Int64 }
        // On disk in the page is the manifest's size on disk of the included regions.
        let onDisk = try Self.treemapBytes(inspected.dom, measure: "onDisk")
        #expect(onDisk.total == roots.reduce(0, +) && onDisk.sum == onDisk.total)

        let diffPage = worlds.folder.join("diff.html")
        #expect(try Tool.mappack(["diff", old, new, "--html", diffPage]).status == 0)
        let diffJSON = try #require(
            try JSONSerialization.jsonObject(with: Data(Tool.mappack(["diff", old, new, "--json"]).stdout.utf8)) as? [String: Any])
        let diffed = try Self.render(diffPage, screenshot: worlds.folder.join("diff.png"))
        let download = try Self.treemapBytes(diffed.dom, measure: "download")
        let expected = try #require(diffJSON["downloadBytes"] as? Int64)
        #expect(expected > 0 && download.total == expected && download.sum == expected)
        #expect(diffed.colours > 5)
    }

    /// `--markdown FILE` appends, so several steps can share `$GITHUB_STEP_SUMMARY`.
    @Test func markdownSummaryAppendsATablePerRun() throws {
        let worlds = try Worlds()
        let summary = worlds.folder.join("summary.md")
        try "# CI\n".write(toFile: summary, atomically: true, encoding: .utf8)
        for _ in 0..<2 {
            #expect(try Tool.mappack(["plan", worlds.recipe("2026.11.0"), "--cache", worlds.cache, "--markdown", summary]).status == 0)
        }
        let text = try String(contentsOfFile: summary, encoding: .utf8)
        #expect(text.hasPrefix("# CI\n"))
        #expect(text.components(separatedBy: "### Plan for alps").count == 3)
        #expect(text.contains("| region | name | on disk | download (compressed) |"))
        #expect(text.contains("| `europe/ch` | "))
    }
}
