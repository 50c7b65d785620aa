import Foundation
import TestSupport
import Testing

/// ARCHITECTURE.md, "Unsafe code", lists every source file outside the wrappers that writes
/// `Unsafe`; this keeps the list and the sources in step both ways.
@Suite struct UnsafeCodeListTests {
    /// The wrappers: all of MapIO, and the files that wrap a C library in other modules.
    static let wrapperFiles: Set<String> = [
        "MapFetch/Curl.swift", "MapFetch/Zchunk/Zchunk.swift", "MapBuild/Recipe/YAMLDocument.swift", "mappack-fuzz/FuzzMain.swift",
    ]

    /// Sources-relative paths of the Swift files under Sources that contain `Unsafe`.
    static func filesWritingUnsafe() throws -> Set<String> {
        let sources = Tool.repositoryRoot + "/Sources"
        guard let walker = FileManager.default.enumerator(atPath: sources) else { throw CocoaError(.fileReadNoSuchFile) }
        var found: Set<String> = []
        while let relative = walker.nextObject() as? String {
            guard relative.hasSuffix(".swift") else { continue }
            let text = try String(contentsOfFile: sources + "/" + relative, encoding: .utf8)
            if text.contains("Unsafe") { found.insert(relative) }
        }
        return found
    }

    /// The paths in backquotes in the first column of the section's table.
    static func listedFiles() throws -> Set<String> {
        let text = try String(contentsOfFile: Tool.repositoryRoot + "/ARCHITECTURE.md", encoding: .utf8)
        let section = try #require(text.components(separatedBy: "## Unsafe code").dropFirst().first?.components(separatedBy: "\n## ").first)
        var listed: Set<String> = []
        for line in section.split(separator: "\n") where line.hasPrefix("| `") {
            let firstColumn = line.dropFirst(2).prefix { $0 != "|" }
            for (index, part) in firstColumn.split(separator: "`", omittingEmptySubsequences: false).enumerated() where index % 2 == 1 {
                listed.insert(String(part))
            }
        }
        return listed
    }

    @Test func everyFileOutsideTheWrappersThatWritesUnsafeIsListed() throws {
        let outside = try Self.filesWritingUnsafe().filter { !$0.hasPrefix("MapIO/") && !Self.wrapperFiles.contains($0) }
        let listed = try Self.listedFiles()
        #expect(!listed.isEmpty)
        #expect(outside.subtracting(listed).sorted() == [], "write them into ARCHITECTURE.md's list, with the reason, or use spans")
        #expect(listed.subtracting(outside).sorted() == [], "listed but no longer writing Unsafe: take them off the list")
    }

    @Test func theListStaysSmall() throws {
        #expect(try Self.listedFiles().count <= 12)
    }
}
