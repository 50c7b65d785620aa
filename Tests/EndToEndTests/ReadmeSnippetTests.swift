import Foundation
import TestSupport
import Testing

/// The README's MapStore snippet is what an app writes: it compiles with `import MapStore` alone,
/// under the package's strict settings (`MemberImportVisibility` among them), against the built modules.
@Suite struct ReadmeSnippetTests {
    /// The Swift block under "On the device: MapStore" in README.md.
    static func mapStoreSnippet() throws -> String {
        let readme = try String(contentsOfFile: Tool.repositoryRoot + "/README.md", encoding: .utf8)
        let section = try #require(readme.range(of: "## On the device: MapStore"), "README has no MapStore section")
        let rest = readme[section.upperBound...]
        let open = try #require(rest.range(of: "```swift\n"), "the MapStore section has no Swift block")
        let close = try #require(rest[open.upperBound...].range(of: "\n```"), "the Swift block does not end")
        return String(rest[open.upperBound..<close.lowerBound])
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

        func readmeSnippet() async throws {

        """

    @Test func readmeMapStoreSnippetCompilesWithMapStoreImportOnly() throws {
        let snippet = try Self.mapStoreSnippet()
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
        #expect(result.status == 0, "the README's MapStore snippet does not compile with import MapStore only:\n\(result.stderr)")
        #expect(!result.stderr.contains("import"), "\(result.stderr)")
    }
}
