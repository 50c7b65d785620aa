import Foundation
import TestSupport
import Testing

/// Region names come from catalogs, so they are input nobody here wrote: control characters in a
/// name must not reach the terminal (ESC sequences that clear it or set its title, CR and LF that
/// forge table rows; bidirectional overrides and isolates that reorder what a terminal shows, as
/// in Trojan Source), and no name may break out of the JSON or Markdown of a report.
@Suite struct HostileNameTests {
    /// The names the fixture gives its regions, by region id.
    static let names: [String: String] = [
        "europe/ch/zh": "Zurich\u{1B}[2J\u{1B}]0;pwned\u{07}\u{202E}lanretni\u{202C}",
        "europe/ch/be": "Bern\rForged\nRow",
        "europe/ch/be/thun": "Thun<!--<script>alert(1)</script>&amp;|x\u{2028}y\u{2029}z",
        "europe/li": "Li\u{9B}2J\u{7F}\tend\u{2066}\u{2067}\u{2068}\u{202A}\u{202B}\u{202D}Vaduz\u{2069}",
    ]

    /// A published source fixture whose regions have `names`, an image of `europe/ch` built from it
    /// and installed on a device.
    struct World {
        let folder = TemporaryFolder("hostile-names")
        var catalog: String { folder.join("cat/catalog.json") }
        var recipe: String { folder.join("r.yaml") }
        var image: String { folder.join("Output/fixture-1.0") }
        var device: [String] { ["--storage", folder.join("device/maps"), "--cache", folder.join("device/cache")] }
        var cache: String { folder.join("cache") }

        init() throws {
            let source = try SourceFixture.write(to: folder.join("src"))
            let path = source + "/source.json"
            var text = try String(contentsOfFile: path, encoding: .utf8)
            for (id, name) in HostileNameTests.names {
                let encoded = String(decoding: try JSONSerialization.data(withJSONObject: name, options: .fragmentsAllowed), as: UTF8.self)
                let line = try #require(text.split(separator: "\n").first { $0.contains("\"id\":\"\(id)\"") })
                let names = try #require(line.firstRange(of: #/"names":\{[^}]*\}/#))
                text = text.replacingOccurrences(
                    of: String(line), with: line.replacingCharacters(in: names, with: "\"names\":{\"en\":\(encoded),\"de\":\(encoded)}"))
            }
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let published = try Tool.mappack(["publish", source, "--out", folder.join("cat")], timeout: 300)
            #expect(published.status == 0, "\(published.stderr)")
            try SourceFixture.recipe(catalog: catalog).write(toFile: recipe, atomically: true, encoding: .utf8)
            let build = try Tool.mappack(["build", recipe, "--out", folder.join("Output"), "--cache", cache], timeout: 300)
            #expect(build.status == 0, "\(build.stderr)")
            let install = try Tool.mappack(["store", "install", "--image", image] + device, timeout: 300)
            #expect(install.status == 0, "\(install.stderr)")
        }
    }

    /// Whether `text` holds a character a terminal acts on: C0 controls but LF and TAB, DEL, C1, and
    /// the bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069).
    static func hasTerminalControls(_ text: String) -> Bool {
        text.unicodeScalars.contains {
            ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || (0x7F...0x9F).contains($0.value) || (0x202A...0x202E).contains($0.value)
                || (0x2066...0x2069).contains($0.value)
        }
    }

    @Test func humanOutputShowsControlCharactersVisiblyAndEachRegionOnOneLine() throws {
        let world = try World()
        let runs: [(String, [String], [String])] = [
            ("regions", ["regions", world.catalog], Array(HostileNameTests.names.keys)),
            ("regions --tree", ["regions", world.catalog, "--tree"], Array(HostileNameTests.names.keys)),
            ("plan", ["plan", world.recipe, "--cache", world.cache], ["europe/ch/zh", "europe/ch/be", "europe/ch/be/thun"]),
            ("inspect", ["inspect", world.image], ["europe/ch/zh", "europe/ch/be", "europe/ch/be/thun"]),
            ("store regions", ["store", "regions"] + world.device, ["europe/ch/zh", "europe/ch/be", "europe/ch/be/thun"]),
            ("store available", ["store", "available", "--catalog", world.catalog] + world.device, ["europe/li"]),
        ]
        for (label, arguments, ids) in runs {
            let result = try Tool.mappack(arguments, timeout: 120)
            #expect(result.status == 0, "\(label): \(result.stderr)")
            #expect(!HostileNameTests.hasTerminalControls(result.stdout), "\(label): \(result.stdout.debugDescription)")
            #expect(!HostileNameTests.hasTerminalControls(result.stderr), "\(label): \(result.stderr.debugDescription)")
            let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            for id in ids {
                let name = HostileNameTests.names[id]!
                // The id stands as a word of its line; the name's first and last words are on it too.
                let rows = lines.filter { $0.split(separator: " ").contains { $0 == id } }
                #expect(rows.count == 1, "\(label): \(id): \(result.stdout.debugDescription)")
                let words = name.split { !$0.isLetter }
                #expect(rows.first.map { $0.contains(words.first!) && $0.contains(words.last!) } == true, "\(label): \(id): \(rows)")
            }
            #expect(!lines.contains { $0.hasPrefix("Row") || $0.hasPrefix("Forged") }, "\(label): \(result.stdout.debugDescription)")
        }
    }

    @Test func errorsEchoNamesWithControlCharactersVisibly() throws {
        let world = try World()
        let hostile = "nowhere\u{1B}]0;pwned\u{07}\rforged\u{202E}desrever\u{2066}"
        let runs: [[String]] = [
            ["plan", world.folder.join(hostile + ".yaml")],
            ["regions", world.folder.join(hostile + ".json")],
            ["store", "delete", hostile] + world.device,
            ["store", "download", hostile, "--catalog", world.catalog] + world.device,
        ]
        for arguments in runs {
            let result = try Tool.mappack(arguments, timeout: 120)
            #expect(result.status != 0, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("pwned"), "\(arguments): the error names the input: \(result.stderr.debugDescription)")
            #expect(!HostileNameTests.hasTerminalControls(result.stderr), "\(arguments): \(result.stderr.debugDescription)")
            #expect(!HostileNameTests.hasTerminalControls(result.stdout), "\(arguments): \(result.stdout.debugDescription)")
        }
    }

    /// The text of the page's `report-data` script as an HTML parser ends it: at the first `</script`.
    static func embeddedData(_ page: String) throws -> String {
        let open = try #require(page.firstRange(of: "<script type=\"application/json\" id=\"report-data\">"))
        let rest = page[open.upperBound...]
        let close = try #require(rest.range(of: "</script", options: .caseInsensitive))
        return String(rest[..<close.lowerBound])
    }

    /// The cells of a Markdown table row: its `|` not escaped as `\|`, less one.
    static func cells(_ row: Substring) -> Int {
        zip(row, row.dropFirst()).filter { $0.0 != "\\" && $0.1 == "|" }.count + (row.first == "|" ? 1 : 0) - 1
    }

    @Test func reportsKeepEveryNameInsideTheirJSONAndMarkdown() throws {
        let world = try World()
        let folder = world.folder
        // A diff lists only the regions that changed: its old side is the fixture with every
        // bundle's bytes changed (and plain names), so every region of the new side is listed.
        let other = try SourceFixture.write(to: folder.join("src-other"), changed: Set(SourceFixture.bundles.keys))
        #expect(try Tool.mappack(["publish", other, "--out", folder.join("cat-other")], timeout: 300).status == 0)
        try SourceFixture.recipe(catalog: folder.join("cat-other/catalog.json")).write(
            toFile: folder.join("other.yaml"), atomically: true, encoding: .utf8)
        let build = try Tool.mappack(
            ["build", folder.join("other.yaml"), "--out", folder.join("Output-other"), "--cache", world.cache], timeout: 300)
        #expect(build.status == 0, "\(build.stderr)")
        let runs: [(String, [String], [String])] = [
            ("plan", ["plan", world.recipe, "--cache", world.cache], ["europe/ch/zh", "europe/ch/be", "europe/ch/be/thun"]),
            ("inspect", ["inspect", world.image], ["europe/ch/zh", "europe/ch/be", "europe/ch/be/thun"]),
            ("diff catalogs", ["diff", folder.join("cat-other/catalog.json"), world.catalog], Array(HostileNameTests.names.keys)),
            ("diff images", ["diff", folder.join("Output-other/fixture-1.0"), world.image], ["europe/ch/zh", "europe/ch/be", "europe/ch/be/thun"]),
        ]
        for (index, (label, arguments, ids)) in runs.enumerated() {
            let html = folder.join("report-\(index).html")
            let markdown = folder.join("report-\(index).md")
            let result = try Tool.mappack(arguments + ["--html", html, "--markdown", markdown], timeout: 120)
            #expect(result.status == 0, "\(label): \(result.stderr)")

            // The data is JSON that gives every name back, and holds nothing that changes how an
            // HTML parser reads a script (`<!--`, `<script`, `</`) or a line separator.
            let data = try HostileNameTests.embeddedData(try String(contentsOfFile: html, encoding: .utf8))
            for marker in ["<", ">", "&", "\u{2028}", "\u{2029}"] {
                #expect(!data.contains(marker), "\(label): \(marker.debugDescription) in the report data")
            }
            let object = try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any]
            let regions = try #require(object?["regions"] as? [[String: Any]], "\(label): \(data.prefix(300))")
            for id in ids {
                #expect(regions.first { $0["id"] as? String == id }?["name"] as? String == HostileNameTests.names[id], "\(label): \(id)")
                if let changes = object?["changes"] as? [[String: Any]] {
                    #expect(changes.first { $0["id"] as? String == id }?["name"] as? String == HostileNameTests.names[id], "\(label): \(id)")
                }
            }

            // Markdown: each region one row, no raw HTML.
            let text = try String(contentsOfFile: markdown, encoding: .utf8)
            #expect(!text.contains("<script") && !text.contains("<!--") && !text.contains("\r"), "\(label): \(text.debugDescription)")
            #expect(!HostileNameTests.hasTerminalControls(text), "\(label): \(text.debugDescription)")
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            let header = lines.first { $0.hasPrefix("| region |") }
            for id in ids {
                let rows = lines.filter { $0.contains("`\(id)`") }
                #expect(rows.count == 1, "\(label): \(id): \(text.debugDescription)")
                let words = HostileNameTests.names[id]!.split { !$0.isLetter }
                #expect(rows.first.map { $0.contains(words.first!) && $0.contains(words.last!) } == true, "\(label): \(id): \(rows)")
                #expect(rows.first.map(HostileNameTests.cells) == header.map(HostileNameTests.cells), "\(label): \(rows)")
            }
            #expect(!lines.contains { $0.hasPrefix("Row") || $0.hasPrefix("Forged") }, "\(label): \(text.debugDescription)")
        }
    }
}
