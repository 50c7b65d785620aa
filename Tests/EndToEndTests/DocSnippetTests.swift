import Foundation
import TestSupport
import Testing

/// The Swift an app developer reads is what an app writes: the MapStore snippet of `docs/mapstore.md`
/// and the code of the DocC getting-started article each compile with `import MapStore` alone, under
/// the package's strict settings (`MemberImportVisibility` among them), against the built modules.
@Suite struct DocSnippetTests {
    /// The Swift block under "## First start" in docs/mapstore.md.
    static func mapStoreSnippet() throws -> String {
        let guide = try String(contentsOfFile: Tool.repositoryRoot + "/docs/mapstore.md", encoding: .utf8)
        let section = try #require(guide.range(of: "## First start"), "docs/mapstore.md has no First start section")
        return try #require(swiftBlocks(in: String(guide[section.upperBound...])).first, "the First start section has no Swift block")
    }

    /// Every Swift block of the DocC getting-started article, in order: one walk-through, each
    /// block carrying on from the one before.
    static func gettingStartedCode() throws -> String {
        let article = try String(
            contentsOfFile: Tool.repositoryRoot + "/Sources/MapStore/MapStore.docc/GettingStarted.md", encoding: .utf8)
        let blocks = swiftBlocks(in: article)
        #expect(blocks.count >= 5, "the article has \(blocks.count) Swift blocks")
        return blocks.joined(separator: "\n")
    }

    /// The contents of the ```swift blocks of a Markdown text.
    static func swiftBlocks(in text: String) -> [String] {
        var blocks: [String] = []
        var rest = text[...]
        while let open = rest.range(of: "```swift\n"), let close = rest[open.upperBound...].range(of: "\n```") {
            blocks.append(String(rest[open.upperBound..<close.lowerBound]))
            rest = rest[close.upperBound...]
        }
        return blocks
    }

    /// What the snippet names without declaring (the app's own things), declared with nothing but
    /// Foundation: generic parameters, so no MapStore or MapFormat type is named here.
    static let prelude = """
        import Foundation
        import MapStore

        struct AppUI: Sendable {
            func apply<Event>(_ event: Event) {}
            func row<A, B, C, D, E, F>(_ name: A, download: B, onDisk: C, children: D, center: E, released: F) {}
            func bar<Region>(_ region: Region, _ fraction: Double) {}
        }
        struct NetworkPath: Sendable { var isExpensive = false }
        struct Reachability: Sendable { func onChange(_ body: @escaping @Sendable (NetworkPath) -> Void) {} }
        let ui = AppUI()
        let reachability = Reachability()
        let releasePub = ""
        let catalogURL = URL(string: "https://maps.example.com/catalog.json")!
        let mapsFolderURL = URL(fileURLWithPath: "/tmp/maps", isDirectory: true)
        let cacheFolderURL = URL(fileURLWithPath: "/tmp/cache", isDirectory: true)
        let bundledImageURL = URL(fileURLWithPath: "/tmp/image.tar.zst")
        let sdCardURL = URL(fileURLWithPath: "/tmp/sd", isDirectory: true)

        func documentedSnippet() async throws {

        """

    @Test func mapStoreGuideSnippetCompilesWithMapStoreImportOnly() throws {
        try Self.expectCompiles(try Self.mapStoreSnippet(), what: "docs/mapstore.md's MapStore snippet")
    }

    @Test func gettingStartedArticleCompilesWithMapStoreImportOnly() throws {
        try Self.expectCompiles(try Self.gettingStartedCode(), what: "the DocC getting-started article's code")
    }

    /// Type-checks `snippet` as the body of an async throwing function after `prelude`.
    static func expectCompiles(_ snippet: String, what: String) throws {
        #expect(!snippet.contains("import "), "the snippet imports by itself; the prelude imports MapStore only")
        let folder = TemporaryFolder()
        let source = folder.path + "/Snippet.swift"
        try (Self.prelude + snippet + "\n}\n").write(toFile: source, atomically: true, encoding: .utf8)
        // The built modules (in `Modules/` since SwiftPM 6, beside the binaries before) and the C modules
        // below them (MapStore's own imports load them).
        let modules = FileManager.default.fileExists(atPath: Tool.buildFolder + "/Modules") ? Tool.buildFolder + "/Modules" : Tool.buildFolder
        // Not `-warnings-as-errors`: the snippet's last lines bind values an app would go on to use.
        var arguments = ["swiftc", "-typecheck", "-swift-version", "6", "-I", modules]
        for feature in ["ExistentialAny", "MemberImportVisibility"] { arguments += ["-enable-upcoming-feature", feature] }
        let cModules = try FileManager.default.contentsOfDirectory(atPath: Tool.repositoryRoot + "/Sources").filter { $0.hasPrefix("C") }
        for module in cModules.sorted() { arguments += ["-Xcc", "-fmodule-map-file=\(Tool.repositoryRoot)/Sources/\(module)/module.modulemap"] }
        let result = try Tool.run("/usr/bin/env", arguments + [source], timeout: 600)
        #expect(!result.timedOut)
        #expect(result.status == 0, "\(what) does not compile with import MapStore only:\n\(result.stderr)")
        #expect(!result.stderr.contains("import"), "\(result.stderr)")
    }
}
