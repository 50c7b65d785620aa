import Foundation
import TestSupport
import Testing

/// Issue 30, "one tileset (MBTiles; PMTiles v3 too)": the real CH/LI/AT tiles of `ImportTests`,
/// turned into PMTiles by the PyPI `pmtiles` converter (a writer nobody here wrote), once with the
/// root directory alone and once with leaf directories of 64 entries; `mappack import` of either
/// gives the same source folder, byte for byte, as the import of the MBTiles. Damaged archives are
/// refused as bad input naming the file.
@Suite struct ImportPMTilesTests {
    /// The PMTiles archives, made once per test process.
    final class Converted: @unchecked Sendable {
        static let shared = Converted()
        let folder = TemporaryFolder("import-pmtiles")
        /// By `pmtiles-convert`: tippecanoe's tiles all fit the root directory.
        var rootOnly: String { folder.join("root.pmtiles") }
        /// By the same converter with its directory layout set to leaves of 64 entries.
        var withLeaves: String { folder.join("leaves.pmtiles") }
        let made: [Tool.Result]

        private init() {
            let mbtiles = ImportTests.Imported.shared.inputs + "/tiles.mbtiles"
            let leaves = """
                import sys
                import pmtiles.writer
                from pmtiles.convert import mbtiles_to_pmtiles
                pmtiles.writer.optimize_directories = lambda entries, target: pmtiles.writer.build_roots_leaves(entries, 64)
                mbtiles_to_pmtiles(sys.argv[1], sys.argv[2], None)
                """
            do {
                made = [
                    try Tool.run(Tool.repositoryRoot + "/.venv/bin/pmtiles-convert", [mbtiles, folder.join("root.pmtiles")], timeout: 300),
                    try Tool.run(RealWorldFixture.python, ["-c", leaves, mbtiles, folder.join("leaves.pmtiles")], timeout: 300),
                ]
            } catch {
                preconditionFailure("pmtiles converter (run `make venv` first): \(error)")
            }
        }
    }

    /// The header's little-endian 8-byte field at `offset` of the file at `path`.
    static func headerField(_ path: String, at offset: Int) throws -> UInt64 {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        return (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
    }

    @Test(arguments: ["root", "leaves"])
    func importingThePMTilesGivesTheMBTilesImportsBytes(layout: String) throws {
        let converted = Converted.shared
        for result in converted.made { #expect(result.status == 0, "\(result.stdout)\(result.stderr)") }
        let imported = ImportTests.Imported.shared
        #expect(imported.run.status == 0, "\(imported.run.stderr)")
        let archive = layout == "root" ? converted.rootOnly : converted.withLeaves
        // Leaf directories' length (header bytes 48-55): none for the root alone, some with leaves.
        #expect((try Self.headerField(archive, at: 48) > 0) == (layout == "leaves"))
        // The release time comes from the inputs' modification times: the same tiles with the same time.
        let mbtilesTime = try FileManager.default.attributesOfItem(atPath: imported.inputs + "/tiles.mbtiles")[.modificationDate]
        try FileManager.default.setAttributes([.modificationDate: try #require(mbtilesTime)], ofItemAtPath: archive)

        let folder = TemporaryFolder("import-pmtiles-\(layout)")
        let run = try Tool.mappack(
            [
                "import", "--tiles", archive, "--regions", imported.inputs + "/regions.geojson", "--places", imported.inputs + "/places.geojson",
                "--out", folder.join("source"), "--catalog", "alps", "--map-version", "2026.12.0",
            ])
        #expect(run.status == 0, "\(run.stderr)")
        // The same summary, tile counts included.
        let placed = /\d+ of \d+ tiles placed/
        let summary = try #require(imported.run.stdout.firstMatch(of: placed)).output
        #expect(run.stdout.firstMatch(of: placed)?.output == summary, "\(run.stdout)")
        let expected = try ImportTests.files(imported.source)
        let got = try ImportTests.files(folder.join("source"))
        #expect(got.keys.sorted() == expected.keys.sorted(), "no scratch file is left, no bundle is missing")
        #expect(expected.keys.contains("source.json") && expected.count >= 10)
        for (path, bytes) in expected { #expect(got[path] == bytes, "\(path) differs from the MBTiles import's") }
    }

    @Test(arguments: [
        ("truncated", "the tile data (offset"),
        ("magic", "no 'PMTiles' magic in its first 7 bytes"),
        ("root-past-end", "the root directory (offset"),
    ])
    func aDamagedArchiveIsRefusedNamingTheFile(damage: String, message: String) throws {
        let converted = Converted.shared
        let folder = TemporaryFolder("import-pmtiles-bad")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: converted.rootOnly))
        switch damage {
        case "truncated": bytes = bytes.prefix(bytes.count / 2)
        case "magic": bytes.replaceSubrange(0..<7, with: Data("PMTilez".utf8))
        default:
            let past = UInt64(bytes.count + 1)
            for index in 0..<8 { bytes[8 + index] = UInt8(truncatingIfNeeded: past >> (8 * UInt64(index))) }
        }
        let file = folder.join("\(damage).pmtiles")
        try bytes.write(to: URL(fileURLWithPath: file))
        let imported = ImportTests.Imported.shared
        let result = try Tool.mappack(
            ["import", "--tiles", file, "--regions", imported.inputs + "/regions.geojson", "--out", folder.join("out")])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(file + ": not a usable PMTiles v3 archive: " + message), "\(result.stderr)")
        if damage != "magic" { #expect(result.stderr.contains("ends past the end of the file"), "\(result.stderr)") }
        // Nothing is left behind: no output, no staging folder.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["\(damage).pmtiles"])
    }
}
