import Foundation
import TestSupport
import Testing

/// The documents name files that exist: every path ARCHITECTURE.md puts in backquotes, and every
/// relative link of README.md, ARCHITECTURE.md, `docs/` and `Benchmarks/README.md` (issue 35 item 9).
/// A file moved or renamed without its documents fails here, naming the document and the path.
@Suite struct DocumentationPathTests {
    /// Top-level folders of the repository a document may name a path under.
    static let repositoryFolders: Set<String> = ["Sources", "Tests", "docs", "Schemas", "Tools", "Benchmarks", "Examples", "Fuzz", "Recipes"]

    /// The paths in backquotes in `text` that name a file or folder of the repository, relative to
    /// its root: those under a top-level folder (`Tests/…`, `docs/…`), and those under a module's
    /// folder (`MapStore/…`, `mappack/…`), which ARCHITECTURE.md writes relative to `Sources/`.
    /// A backquoted command (`Benchmarks/chunked.sh --chunk`) names its first word. Placeholders
    /// (`Schemas/NAME.schema.json`, `Sources/C*/`) and paths relative to a module's subfolder
    /// (`Common/Hex.swift`, read with the module named beside them) are not checked.
    static func namedPaths(in text: String, modules: Set<String>) -> [String] {
        var paths: [String] = []
        for (index, part) in text.split(separator: "`", omittingEmptySubsequences: false).enumerated() where index % 2 == 1 {
            let word = String(part.prefix { !$0.isWhitespace })
            let components = word.split(separator: "/").map(String.init)
            guard components.count >= 2 || word.hasSuffix("/"), let first = components.first else { continue }
            if word.contains("*") || components.contains(where: { $0.contains("NAME") }) { continue }
            if repositoryFolders.contains(first) {
                paths.append(word)
            } else if modules.contains(first) {
                paths.append("Sources/" + word)
            }
        }
        return paths
    }

    /// The folders under `Sources/`: one per module.
    static func modules() throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: Tool.repositoryRoot + "/Sources"))
    }

    /// The paths of `paths` (relative to the repository) that do not exist.
    static func missing(_ paths: [String]) -> [String] {
        paths.filter { !FileManager.default.fileExists(atPath: Tool.repositoryRoot + "/" + $0) }
    }

    @Test func everyPathArchitectureNamesExists() throws {
        let text = try String(contentsOfFile: Tool.repositoryRoot + "/ARCHITECTURE.md", encoding: .utf8)
        let paths = Self.namedPaths(in: text, modules: try Self.modules())
        // The document names a hundred and more; far fewer means the parsing broke.
        #expect(paths.count > 100, "\(paths)")
        #expect(Self.missing(paths) == [], "ARCHITECTURE.md names paths that do not exist: write the path as it is, or drop it")
    }

    @Test func namedPathsAreReadFromBackquotesOnly() throws {
        let modules: Set<String> = ["MapStore", "mappack"]
        let text = """
            `MapStore/State/RegionState.swift` and `Tests/MapIOTests` and `Benchmarks/chunked.sh --chunk`,
            not `Common/Hex.swift`, `Schemas/NAME.schema.json`, `Sources/C*/`, `mappack-catalog/1`, or Sources/Bare.swift
            """
        #expect(
            Self.namedPaths(in: text, modules: modules) == [
                "Sources/MapStore/State/RegionState.swift", "Tests/MapIOTests", "Benchmarks/chunked.sh",
            ])
        #expect(
            Self.missing(["Sources/MapStore/State/RegionState.swift", "Sources/MapStore/State/NoSuchState.swift"]) == [
                "Sources/MapStore/State/NoSuchState.swift"
            ])
    }

    /// Markdown links `[text](target)` of `text` that point into the repository: no scheme, no
    /// bare anchor; the `#anchor` is cut off.
    static func relativeLinks(in text: String) -> [String] {
        var links: [String] = []
        var rest = text[...]
        while let open = rest.range(of: "](") {
            let after = rest[open.upperBound...]
            guard let close = after.firstIndex(of: ")") else { break }
            let target = String(after[..<close].prefix { $0 != "#" })
            if !target.isEmpty, !target.contains("://"), !target.hasPrefix("mailto:") { links.append(target) }
            rest = after[close...]
        }
        return links
    }

    @Test func everyRelativeLinkOfTheDocumentsPointsAtAFile() throws {
        let docs = try FileManager.default.contentsOfDirectory(atPath: Tool.repositoryRoot + "/docs").filter { $0.hasSuffix(".md") }
        #expect(docs.count >= 10, "\(docs)")
        let documents = ["README.md", "ARCHITECTURE.md", "Benchmarks/README.md"] + docs.map { "docs/" + $0 }
        for document in documents {
            let text = try String(contentsOfFile: Tool.repositoryRoot + "/" + document, encoding: .utf8)
            let folder = (document as NSString).deletingLastPathComponent
            let targets = Self.relativeLinks(in: text).map { folder.isEmpty ? $0 : folder + "/" + $0 }
            #expect(Self.missing(targets) == [], "\(document) links to files that do not exist")
        }
    }

    /// Every `make TARGET` the documents name is a target of the Makefile (or of the file it includes).
    @Test func everyMakeTargetTheDocumentsNameExists() throws {
        let makefiles = try ["Makefile", "Tools/realworld/venv.mk"].map {
            try String(contentsOfFile: Tool.repositoryRoot + "/" + $0, encoding: .utf8)
        }
        let targets = Set(
            makefiles.flatMap { $0.split(separator: "\n") }.compactMap { line -> String? in
                guard let colon = line.firstIndex(of: ":"), !line.hasPrefix("\t"), !line.hasPrefix("#") else { return nil }
                let name = line[..<colon]
                return name.allSatisfy { $0.isLetter || $0 == "-" } ? String(name) : nil
            })
        let docs = try FileManager.default.contentsOfDirectory(atPath: Tool.repositoryRoot + "/docs").filter { $0.hasSuffix(".md") }
        var named = 0
        for document in ["README.md", "ARCHITECTURE.md", "Benchmarks/README.md"] + docs.map({ "docs/" + $0 }) {
            let text = try String(contentsOfFile: Tool.repositoryRoot + "/" + document, encoding: .utf8)
            for part in text.components(separatedBy: "`make ").dropFirst() {
                let target = String(part.prefix { $0.isLetter || $0 == "-" })
                named += 1
                #expect(targets.contains(target), "\(document) names make \(target), which the Makefile does not have")
            }
        }
        #expect(named >= 10)
    }

    /// The README is what it is and how to walk it; the rest is in `docs/` and `Benchmarks/README.md`.
    @Test func readmeStaysShort() throws {
        let readme = try String(contentsOfFile: Tool.repositoryRoot + "/README.md", encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines <= 250, "README.md has \(lines) lines: move a topic to docs/, a measurement to Benchmarks/README.md")
    }
}
