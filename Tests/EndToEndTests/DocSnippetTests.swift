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

    /// The DocC catalog's links resolve against the built module: a topic or article naming a symbol
    /// that is gone or renamed makes `docc convert` warn. The toolchain's `swift symbolgraph-extract`
    /// and `docc`, no plugin.
    @Test func mapStoreDocCCatalogLinksResolve() throws {
        let folder = TemporaryFolder()
        let graphs = folder.join("symbol-graphs")
        try FileManager.default.createDirectory(atPath: graphs, withIntermediateDirectories: true)
        var extract = ["swift", "symbolgraph-extract", "-module-name", "MapStore", "-I", Self.modulesFolder(), "-output-dir", graphs]
        extract += ["-minimum-access-level", "public"] + (try Self.cModuleMapArguments())
        let extracted = try Tool.run("/usr/bin/env", extract, timeout: 600)
        #expect(extracted.status == 0, "\(extracted.stderr)")
        let converted = try Tool.run(
            "/usr/bin/env",
            [
                "docc", "convert", Tool.repositoryRoot + "/Sources/MapStore/MapStore.docc", "--additional-symbol-graph-dir", graphs,
                "--output-path", folder.join("MapStore.doccarchive"), "--fallback-display-name", "MapStore",
                "--fallback-bundle-identifier", "mappack.MapStore",
            ], timeout: 600)
        #expect(!converted.timedOut)
        #expect(converted.status == 0, "\(converted.stderr)")
        let output = converted.stdout + converted.stderr
        #expect(!output.contains("warning") && !output.contains("error"), "MapStore.docc: \(output)")
        #expect(FileManager.default.fileExists(atPath: folder.join("MapStore.doccarchive/data/documentation/mapstore/gettingstarted.json")))
    }

    /// The built modules: in `Modules/` since SwiftPM 6, beside the binaries before.
    static func modulesFolder() -> String {
        FileManager.default.fileExists(atPath: Tool.buildFolder + "/Modules") ? Tool.buildFolder + "/Modules" : Tool.buildFolder
    }

    /// `-Xcc -fmodule-map-file=…` for the C modules below MapStore (its own imports load them).
    static func cModuleMapArguments() throws -> [String] {
        let cModules = try FileManager.default.contentsOfDirectory(atPath: Tool.repositoryRoot + "/Sources").filter { $0.hasPrefix("C") }
        return cModules.sorted().flatMap { ["-Xcc", "-fmodule-map-file=\(Tool.repositoryRoot)/Sources/\($0)/module.modulemap"] }
    }

    /// Type-checks `snippet` as the body of an async throwing function after `prelude`.
    static func expectCompiles(_ snippet: String, what: String) throws {
        #expect(!snippet.contains("import "), "the snippet imports by itself; the prelude imports MapStore only")
        let folder = TemporaryFolder()
        let source = folder.path + "/Snippet.swift"
        try (Self.prelude + snippet + "\n}\n").write(toFile: source, atomically: true, encoding: .utf8)
        // Not `-warnings-as-errors`: the snippet's last lines bind values an app would go on to use.
        var arguments = ["swiftc", "-typecheck", "-swift-version", "6", "-I", modulesFolder()]
        for feature in ["ExistentialAny", "MemberImportVisibility"] { arguments += ["-enable-upcoming-feature", feature] }
        arguments += try cModuleMapArguments()
        let result = try Tool.run("/usr/bin/env", arguments + [source], timeout: 600)
        #expect(!result.timedOut)
        #expect(result.status == 0, "\(what) does not compile with import MapStore only:\n\(result.stderr)")
        #expect(!result.stderr.contains("import"), "\(result.stderr)")
    }
}
