import Foundation
import TestSupport
import Testing

/// `demo-world --small-files S` (issue 43's world shape for the benchmarks): the routing bundles'
/// file count follows S instead of `--scale`, and nothing else changes.
@Suite struct SmallFilesOptionTests {
    func generate(_ folder: TemporaryFolder, _ name: String, _ extra: [String]) throws -> String {
        let out = folder.join(name)
        let result = try Tool.run(Tool.path("demo-world"), ["--out", out, "--only", "europe/li", "--scale", "4"] + extra)
        #expect(result.status == 0, "\(result.stderr)")
        return out
    }

    /// Relative path → size of every file under `folder`.
    func files(_ folder: String) throws -> [String: Int] {
        var sizes: [String: Int] = [:]
        for path in try FileManager.default.subpathsOfDirectory(atPath: folder) {
            let attributes = try FileManager.default.attributesOfItem(atPath: folder + "/" + path)
            if attributes[.type] as? FileAttributeType == .typeRegular { sizes[path] = attributes[.size] as? Int }
        }
        return sizes
    }

    @Test func smallFilesSetsTheRoutingFileCountAlone() throws {
        let folder = TemporaryFolder("small-files")
        let plain = try files(try generate(folder, "plain", []) + "/bundles")
        let same = try files(try generate(folder, "same", ["--small-files", "4"]) + "/bundles")
        let fewer = try files(try generate(folder, "fewer", ["--small-files", "1"]) + "/bundles")
        // Its default is the --scale value.
        #expect(same == plain)
        let routing = { (sizes: [String: Int]) in sizes.keys.filter { $0.hasSuffix(".rt") } }
        #expect(routing(fewer).count * 3 < routing(plain).count, "\(routing(fewer).count) against \(routing(plain).count)")
        #expect(!routing(fewer).isEmpty)
        // Tiles and search keep their sizes.
        for (path, size) in plain where path.hasSuffix(".db") { #expect(fewer[path] == size, "\(path)") }
        let bad = try Tool.run(Tool.path("demo-world"), ["--out", folder.join("bad"), "--small-files", "0"])
        #expect(bad.status == 2 && bad.stderr.contains("--small-files '0'"), "\(bad.stderr)")
    }
}
