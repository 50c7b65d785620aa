import Foundation
import TestSupport
import Testing

/// ARCHITECTURE.md, "Portability" (issue 46 item 4): in the modules MapStore links, every
/// Linux-only branch also yields to `MAPPACK_PORTABLE`, so `make portable` compiles the POSIX
/// fallbacks and nothing else; and in all of Sources, `EINTR` is retried in one place only,
/// `FileDescriptor.retryOnInterrupt`.
@Suite struct PortabilityTests {
    /// The one file that may name `EINTR` outside a comment.
    static let interruptRule = "MapIO/Files/FileDescriptor.swift"

    /// `Package.swift`'s targets and the names each lists in `dependencies:`.
    static func packageTargets() throws -> [String: [String]] {
        let text = try String(contentsOfFile: Tool.repositoryRoot + "/Package.swift", encoding: .utf8)
        var targets: [String: [String]] = [:]
        for match in text.matches(of: /\.(?:target|systemLibrary)\(name: "(\w+)"(?:, dependencies: \[([^\]]*)\])?/) {
            let names = (match.output.2.map(String.init) ?? "").matches(of: /"(\w+)"/).map { String($0.output.1) }
            targets[String(match.output.1)] = names
        }
        return targets
    }

    /// MapStore and every target it links, directly or through another.
    static func linkedByMapStore() throws -> Set<String> {
        let targets = try packageTargets()
        var found: Set<String> = []
        var pending = ["MapStore"]
        while let next = pending.popLast() {
            guard found.insert(next).inserted else { continue }
            pending += targets[next] ?? []
        }
        return found
    }

    /// Sources-relative paths and texts of the files under `Sources/module` ending in `suffix`.
    static func files(of module: String, ending suffix: String) throws -> [(path: String, text: String)] {
        let folder = Tool.repositoryRoot + "/Sources/" + module
        guard let walker = FileManager.default.enumerator(atPath: folder) else { return [] }
        var files: [(path: String, text: String)] = []
        while let relative = walker.nextObject() as? String {
            guard relative.hasSuffix(suffix) else { continue }
            files.append((module + "/" + relative, try String(contentsOfFile: folder + "/" + relative, encoding: .utf8)))
        }
        return files
    }

    /// The lines of `text` without their `//` comments.
    static func codeLines(_ text: String) -> [(number: Int, code: Substring)] {
        text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().map { index, line in
            (index + 1, line.firstRange(of: "//").map { line[..<$0.lowerBound] } ?? line[...])
        }
    }

    @Test func theModulesMapStoreLinksAreFound() throws {
        let linked = try Self.linkedByMapStore()
        #expect(linked.isSuperset(of: ["MapStore", "MapFetch", "MapVerify", "MapIO", "MapFormat", "CLinux", "CMalloc"]))
        #expect(!linked.contains("MapBuild") && !linked.contains("mappack"))
    }

    @Test func everyLinuxOnlyBranchMapStoreLinksYieldsToThePortableBuild() throws {
        var bare: [String] = []
        for module in try Self.linkedByMapStore() {
            for file in try Self.files(of: module, ending: ".swift") {
                for (number, code) in Self.codeLines(file.text) where code.contains(/#(?:else)?if\b.*os\(Linux\)/) {
                    if !code.contains("!MAPPACK_PORTABLE") { bare.append("\(file.path):\(number)") }
                }
            }
            for file in try Self.files(of: module, ending: ".h") {
                for (number, code) in Self.codeLines(file.text) where code.contains(/#\s*(?:el)?if\b.*(?:__linux__|__GLIBC__)/) {
                    if !code.contains("!defined(MAPPACK_PORTABLE)") { bare.append("\(file.path):\(number)") }
                }
            }
        }
        #expect(bare.sorted() == [], "write `#if os(Linux) && !MAPPACK_PORTABLE` with a POSIX fallback in the #else")
    }

    @Test func onlyFileDescriptorRetriesOnEINTR() throws {
        let sources = Tool.repositoryRoot + "/Sources"
        let modules = try FileManager.default.contentsOfDirectory(atPath: sources)
        var elsewhere: [String] = []
        for module in modules {
            for file in try Self.files(of: module, ending: ".swift") where file.path != Self.interruptRule {
                for (number, code) in Self.codeLines(file.text) where code.contains(/\bEINTR\b/) {
                    elsewhere.append("\(file.path):\(number)")
                }
            }
        }
        #expect(elsewhere.sorted() == [], "retry through FileDescriptor.retryOnInterrupt")
    }
}
