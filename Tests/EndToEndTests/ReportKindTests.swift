import Foundation
import TestSupport
import Testing

/// Issue 32 item 5: one legend and one colour per bundle kind in every report, and the kinds an
/// image's files show named as the catalog names them.
@Suite struct ReportKindTests {
    /// The legend of a page: kind → colour.
    static func legend(_ page: String) throws -> [String: String] {
        let html = try String(contentsOfFile: page, encoding: .utf8)
        let line = try #require(html.split(separator: "\n").first { $0.hasPrefix("<p class=\"legend\">") }, "no legend")
        var kinds: [String: String] = [:]
        for match in line.matches(of: /<i style="background:(#[0-9a-f]{6})"><\/i>([^<]+)</) { kinds[String(match.2)] = String(match.1) }
        return kinds
    }

    @Test func everyPageGivesAKindTheSameNameAndColour() throws {
        let folder = TemporaryFolder("report-kinds")
        var recipes: [String] = []
        for version in ["2026.11.0", "2026.12.0"] {
            let catalog = try DemoWorldFixture.publish(
                in: folder, only: "europe/at", scale: 0.1, mapVersion: version, baseVersion: "2026.11.0", changeFraction: 0.3)
            let recipe = folder.join("at-\(version).yaml")
            try "name: at\ncatalog: \(catalog)\nregions:\n  include: [europe/at]\n".write(toFile: recipe, atomically: true, encoding: .utf8)
            let build = try Tool.mappack(["build", recipe, "--cache", folder.join("cache"), "--out", folder.join("Output")])
            #expect(build.status == 0, "\(build.stderr)")
            recipes.append(recipe)
        }
        #expect(try Tool.mappack(["plan", recipes[0], "--cache", folder.join("cache"), "--html", folder.join("plan.html")]).status == 0)
        let old = folder.join("Output/at-2026.11.0")
        #expect(try Tool.mappack(["inspect", old, "--html", folder.join("inspect.html")]).status == 0)
        #expect(try Tool.mappack(["diff", old, folder.join("Output/at-2026.12.0"), "--html", folder.join("diff.html")]).status == 0)
        let plan = try Self.legend(folder.join("plan.html"))
        let inspect = try Self.legend(folder.join("inspect.html"))
        let diff = try Self.legend(folder.join("diff.html"))
        #expect(Set(plan.keys).isSuperset(of: ["tiles", "border", "routing"]), "\(plan)")
        // The image's bundles carry the catalog's kind names, border bundles apart from tiles.
        #expect(inspect.keys.sorted() == plan.keys.sorted(), "inspect \(inspect.keys.sorted()), plan \(plan.keys.sorted())")
        for (kind, colour) in inspect { #expect(plan[kind] == colour, "\(kind): plan \(plan[kind] ?? "-"), inspect \(colour)") }
        for (kind, colour) in diff { #expect(plan[kind] == colour, "\(kind): plan \(plan[kind] ?? "-"), diff \(colour)") }
        #expect(Set(plan.values).count == plan.count, "two kinds share a colour: \(plan)")
    }
}
