import Foundation
import TestSupport
import Testing

/// `make demo` reuses the demo world it generated and published before when its inputs (the
/// binaries, the map version, the options) are unchanged (issue 19 item 9), instead of spending
/// most of its time regenerating the same bytes. Run as `make demo-world` with this build's
/// binaries and a small world.
@Suite struct DemoTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    func makeDemoWorld(out: String, options: String) throws -> Tool.Result {
        try Tool.run(
            "/usr/bin/make",
            [
                "-s", "-C", DemoTests.root, "demo-world", "RELEASE=\(Tool.buildFolder)", "DEMO_OUT=\(out)",
                "DEMO_WORLD_OPTIONS=\(options)",
            ])
    }

    func modified(_ path: String) throws -> Date {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date)
    }

    @Test func theDemoWorldIsReusedWhenItsInputsAreUnchanged() throws {
        let folder = TemporaryFolder("demo")
        let catalog = folder.join("demo-world/2026.11.0/catalog.json")
        let first = try makeDemoWorld(out: folder.path, options: "--only europe/ch --scale 0.2")
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        let made = try modified(catalog)
        let again = try makeDemoWorld(out: folder.path, options: "--only europe/ch --scale 0.2")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("up to date"), "\(again.stdout)")
        #expect(try modified(catalog) == made)
        // Other options make another world.
        let other = try makeDemoWorld(out: folder.path, options: "--only europe/ch --scale 0.25")
        #expect(other.status == 0, "\(other.stderr)")
        #expect(!other.stdout.contains("up to date"), "\(other.stdout)")
        #expect(try modified(catalog) != made)
    }

    /// `make real-world` (what `make demo` builds from): real Natural Earth tiles published with this
    /// build's `mappack`, reused when the generator, requirements, binary and options are unchanged.
    @Test func theRealWorldIsPublishedAndReusedWhenItsInputsAreUnchanged() throws {
        let folder = TemporaryFolder("real-demo")
        func make(_ options: String) throws -> Tool.Result {
            try Tool.run(
                "/usr/bin/make",
                [
                    "-s", "-C", DemoTests.root, "real-world", "RELEASE=\(Tool.buildFolder)", "DEMO_OUT=\(folder.path)",
                    "REAL_WORLD_OPTIONS=\(options)",
                ],
                timeout: 600)
        }
        let catalog = folder.join("real-world/2026.12.0/catalog.json")
        let first = try make("--countries CH,LI")
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        let text = try String(contentsOfFile: catalog, encoding: .utf8)
        #expect(text.contains("\"europe/western-europe/ch\"") && text.contains("Liechtenstein"))
        let made = try modified(catalog)
        let again = try make("--countries CH,LI")
        #expect(again.status == 0 && again.stdout.contains("up to date"), "\(again.stdout)\(again.stderr)")
        #expect(try modified(catalog) == made)
    }
}
