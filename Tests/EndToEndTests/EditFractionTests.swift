import Foundation
import TestSupport
import Testing

/// `demo-world --edit-fraction F` (issue 21): a changed bundle's files keep their size and layout
/// and differ from the base version in about F of their bytes, so a chunked update can reuse the rest.
@Suite struct EditFractionTests {
    func generate(_ folder: TemporaryFolder, version: String, edit: String, name: String? = nil) throws -> String {
        let out = folder.join(name ?? "src-\(version)")
        let result = try Tool.run(
            Tool.path("demo-world"),
            [
                "--out", out, "--only", "europe/ch", "--scale", "2", "--map-version", version,
                "--base-version", "2026.11.0", "--change-fraction", "0.3", "--edit-fraction", edit,
            ])
        #expect(result.status == 0, "\(result.stderr)")
        return out
    }

    @Test(arguments: [0.02, 0.2]) func changedFilesDifferInAboutTheEditFractionOfTheirBytes(fraction: Double) throws {
        let folder = TemporaryFolder("edit")
        let old = try generate(folder, version: "2026.11.0", edit: "\(fraction)")
        let new = try generate(folder, version: "2026.12.0", edit: "\(fraction)")
        let source = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: new + "/source.json"))) as! [String: Any]
        let changed = try #require(source["changed"] as? [String])
        let tiles = changed.filter { $0.hasSuffix(".tiles") }
        #expect(!tiles.isEmpty)
        var differing = 0
        var total = 0
        for bundle in tiles {
            let files = try FileManager.default.subpathsOfDirectory(atPath: new + "/bundles/" + bundle).filter { $0.hasSuffix(".db") }
            #expect(!files.isEmpty)
            for file in files {
                let a = try Data(contentsOf: URL(fileURLWithPath: old + "/bundles/\(bundle)/\(file)"))
                let b = try Data(contentsOf: URL(fileURLWithPath: new + "/bundles/\(bundle)/\(file)"))
                #expect(a.count == b.count, "\(bundle)/\(file): an edit keeps the file's size")
                total += b.count
                differing += zip(a, b).reduce(0) { $0 + ($1.0 != $1.1 ? 1 : 0) }
            }
        }
        let share = Double(differing) / Double(total)
        #expect(share > fraction * 0.4 && share < fraction * 1.5, "\(differing) of \(total) bytes differ (\(share)), asked \(fraction)")
        // Deterministic by seed: the same version again gives the same bytes.
        let again = try generate(folder, version: "2026.12.0", edit: "\(fraction)", name: "again")
        let file = "bundles/\(tiles[0])/regions/\(tiles[0].dropLast(6).replacingOccurrences(of: ".", with: "/"))/tiles.db"
        #expect(try Data(contentsOf: URL(fileURLWithPath: new + "/" + file)) == Data(contentsOf: URL(fileURLWithPath: again + "/" + file)))
    }

    @Test func editFractionOutsideZeroToOneIsAUsageError() throws {
        let folder = TemporaryFolder("edit-bad")
        let result = try Tool.run(Tool.path("demo-world"), ["--out", folder.join("w"), "--edit-fraction", "1.5"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--edit-fraction"), "\(result.stderr)")
    }
}
