import Foundation
import MapFormat
import MapIO
import TestSupport
import Testing

@testable import MapBuild

/// The reading side of PMTiles v3 in `mappack import`: the converter refusing damaged or hostile
/// archives (built here from the format's own writer) with the file and what is wrong. The format
/// itself read back: `MapFormatTests/PMTilesTests`.
@Suite struct PMTilesReaderTests {
    // MARK: - The converter on hostile archives

    /// One tile, 0/0/0, `tile` bytes; the sections in the spec's order after the header.
    struct Archive {
        var root: Data
        var leaves = Data()
        var metadata = Data(#"{"vector_layers":[{"id":"countries","fields":{}}],"attribution":"© test"}"#.utf8)
        var tileData = Data([0x1A, 0x00])
        var header = PMTiles.Header()

        init(root: [PMTiles.Entry] = [PMTiles.Entry(tileID: 0, offset: 0, length: 2, runLength: 1)]) {
            self.root = PMTiles.directory(root)
            header.internalCompression = .none
            header.tileType = .mvt
        }

        /// Writes the archive into `folder` as `name`, with the header's sections filled in.
        func write(to folder: TemporaryFolder, name: String = "tiles.pmtiles", adjust: (inout PMTiles.Header) -> Void = { _ in }) throws
            -> String
        {
            var header = header
            header.rootOffset = 127
            header.rootLength = UInt64(root.count)
            header.metadataOffset = header.rootOffset + header.rootLength
            header.metadataLength = UInt64(metadata.count)
            header.leafDirectoriesOffset = header.metadataOffset + header.metadataLength
            header.leafDirectoriesLength = UInt64(leaves.count)
            header.tileDataOffset = header.leafDirectoriesOffset + header.leafDirectoriesLength
            header.tileDataLength = UInt64(tileData.count)
            adjust(&header)
            let path = folder.join(name)
            try (header.bytes + root + metadata + leaves + tileData).write(to: URL(fileURLWithPath: path))
            return path
        }
    }

    /// The import's reading of `path` into a scratch MBTiles; the error's text when it fails.
    static func convert(_ path: String, in folder: TemporaryFolder) -> String? {
        do {
            let archive = try #require(try ImportPMTiles.open(path))
            try archive.convert(to: folder.join("scratch-\(UUID().uuidString).mbtiles"))
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func aSmallArchiveBecomesAnMBTilesWithTMSRowsAndItsMetadata() throws {
        let folder = TemporaryFolder("pmtiles-small")
        var archive = Archive(root: [
            PMTiles.Entry(tileID: 0, offset: 0, length: 2, runLength: 1),
            // 1/0/0, 1/0/1, 1/1/1: one run of three identical tiles.
            PMTiles.Entry(tileID: 1, offset: 2, length: 3, runLength: 3),
        ])
        archive.tileData = Data([0x1A, 0x00, 0x1A, 0x01, 0x02])
        archive.header.minZoom = 0
        archive.header.maxZoom = 1
        let path = try archive.write(to: folder)
        let scratch = folder.join("out.mbtiles")
        #expect(try #require(try ImportPMTiles.open(path)).convert(to: scratch) == 4)
        let database = try SQLiteDatabase(path: scratch, readOnly: true)
        let rows = try database.query("SELECT zoom_level AS z, tile_column AS x, tile_row AS y, hex(tile_data) AS hex FROM tiles ORDER BY z, x, y")
            .map { "\(try $0["z", as: Int64.self])/\(try $0["x", as: Int64.self])/\(try $0["y", as: Int64.self]) \(try $0["hex", as: String.self])" }
        // XYZ 1/0/0 is TMS row 1.
        #expect(rows == ["0/0/0 1A00", "1/0/0 1A0102", "1/0/1 1A0102", "1/1/0 1A0102"])
        var metadata: [String: String] = [:]
        for row in try database.query("SELECT name, value FROM metadata") {
            metadata[try row["name", as: String.self]] = try row["value", as: String.self]
        }
        #expect(metadata["format"] == "pbf" && metadata["minzoom"] == "0" && metadata["maxzoom"] == "1")
        #expect(metadata["attribution"] == "© test")
        #expect(metadata["json"] == #"{"vector_layers":[{"fields":{},"id":"countries"}]}"#)
        #expect(ImportPMTiles.maxDirectoryBytes >= 1 << 20)
    }

    @Test func aPMTilesOfAnotherVersionOrWithoutTheMagicIsRefused() throws {
        let folder = TemporaryFolder("pmtiles-magic")
        let good = try Archive().write(to: folder)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: good))
        bytes[7] = 2
        try bytes.write(to: URL(fileURLWithPath: folder.join("v2.pmtiles")))
        #expect(
            Self.convert(folder.join("v2.pmtiles"), in: folder)?.contains("v2.pmtiles: not a usable PMTiles v3 archive: PMTiles version 2") == true)
        bytes[0] = UInt8(ascii: "Q")
        try bytes.write(to: URL(fileURLWithPath: folder.join("q.pmtiles")))
        #expect(
            Self.convert(folder.join("q.pmtiles"), in: folder)?.contains("q.pmtiles: not a usable PMTiles v3 archive: no 'PMTiles' magic") == true)
        // Without the magic or the name, it is not PMTiles at all: the MBTiles reader gets it.
        try bytes.write(to: URL(fileURLWithPath: folder.join("q.mbtiles")))
        #expect(try ImportPMTiles.open(folder.join("q.mbtiles")) == nil)
    }

    @Test(arguments: [
        ("root", "the root directory (offset 9999, length"),
        ("tiles", "the tile data (offset"),
    ])
    func aSectionPastTheEndOfTheFileIsRefused(section: String, message: String) throws {
        let folder = TemporaryFolder("pmtiles-eof")
        let path = try Archive().write(to: folder) { header in
            if section == "root" { header.rootOffset = 9999 } else { header.tileDataLength += 1 }
        }
        let error = try #require(Self.convert(path, in: folder))
        #expect(error.contains(path + ": not a usable PMTiles v3 archive: " + message) && error.contains("ends past the end of the file"), "\(error)")
    }

    @Test(arguments: [
        (
            [PMTiles.Entry(tileID: 3, offset: 0, length: 2, runLength: 1), PMTiles.Entry(tileID: 3, offset: 0, length: 2, runLength: 1)],
            "tile ids are not ascending: tile id 3 comes after tile id 3"
        ),
        (
            [PMTiles.Entry(tileID: 1, offset: 0, length: 2, runLength: 4), PMTiles.Entry(tileID: 3, offset: 0, length: 2, runLength: 1)],
            "tile ids are not ascending: tile id 3 comes after tile id 4"
        ),
        ([PMTiles.Entry(tileID: 0, offset: 0, length: 0, runLength: 1)], "the entry for tile id 0 has length 0"),
        ([PMTiles.Entry(tileID: 0, offset: 1, length: 2, runLength: 1)], "tile id 0's bytes (offset 1, length 2) end past the tile data's 2 bytes"),
        (
            [PMTiles.Entry(tileID: 0, offset: 0, length: 2, runLength: 0)],
            "the entry for tile id 0 (run length 0: a leaf directory at offset 0, length 2) ends past the leaf directories' 0 bytes"
        ),
        (
            [PMTiles.Entry(tileID: 1 << 62, offset: 0, length: 2, runLength: 1)],
            "the run of 1 tiles from tile id 4611686018427387904 goes past zoom 30"
        ),
    ])
    func badEntriesAreRefusedNamingTheDirectory(root: [PMTiles.Entry], message: String) throws {
        let folder = TemporaryFolder("pmtiles-entries")
        let path = try Archive(root: root).write(to: folder)
        let error = try #require(Self.convert(path, in: folder))
        #expect(error.contains(path + ": not a usable PMTiles v3 archive: the root directory: " + message), "\(error)")
    }

    /// A shard decodes every directory once (the survey), then only the leaves of its own run: a
    /// leaf of another shard's run damaged after the survey goes unread, while the shard that owns it
    /// still meets the damage. (Before, a second survey walked every leaf again.)
    @Test func aShardsFillReadsOnlyTheLeavesOfItsRun() throws {
        let folder = TemporaryFolder("pmtiles-shard-leaves")
        // Zoom 4's 256 tiles, each its own 2 bytes, in 8 leaves of 32 entries.
        let first = UInt64(85)
        var archive = Archive()
        var leaves = Data()
        var pointers: [PMTiles.Entry] = []
        var leafRanges: [Range<Int>] = []
        for leaf in 0..<8 {
            let entries = (0..<32).map { index in
                let tile = UInt64(leaf * 32 + index)
                return PMTiles.Entry(tileID: first + tile, offset: tile * 2, length: 2, runLength: 1)
            }
            let bytes = PMTiles.directory(entries)
            pointers.append(PMTiles.Entry(tileID: first + UInt64(leaf * 32), offset: UInt64(leaves.count), length: UInt64(bytes.count), runLength: 0))
            leafRanges.append(leaves.count..<leaves.count + bytes.count)
            leaves += bytes
        }
        archive.root = PMTiles.directory(pointers)
        archive.leaves = leaves
        archive.tileData = Data((0..<512).map { UInt8($0 % 251) })
        let path = try archive.write(to: folder)
        let leafSection = 127 + archive.root.count + archive.metadata.count

        func shard(_ shares: [Double]) throws -> Int {
            let pmtiles = try #require(try ImportPMTiles.open(path))
            let database = try pmtiles.create(folder.join("scratch-\(UUID().uuidString).mbtiles"))
            let survey = try pmtiles.survey(into: database)
            #expect(survey.tiles == 256 && survey.marks.count == 8, "\(survey.tiles) tiles, \(survey.marks.count) marks")
            // The last leaf's bytes overwritten after the survey read them: a varint that never ends.
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.seek(toOffset: UInt64(leafSection + leafRanges[7].lowerBound))
            try handle.write(contentsOf: Data(repeating: 0xFF, count: leafRanges[7].count))
            try handle.close()
            defer { _ = try? archive.write(to: folder) }
            try pmtiles.fill(database, wanted: { _, _, _ in .bytes }, totals: survey, shares: shares)
            try pmtiles.finish(database)
            return Int(try database.firstRow("SELECT count(*) AS n FROM tiles")?["n", as: Int64.self] ?? -1)
        }
        // The first half of the work lies in the first leaves: the damaged last leaf is never read.
        let taken = try shard([0, 0.5])
        #expect(taken > 0 && taken < 256, "the first shard of 2 took \(taken) of 256 tiles")
        // The second half holds the damaged leaf, which its shard reads and refuses.
        #expect(throws: ImportError.self) { try shard([0.5, 1]) }
    }

    @Test func leavesNestedDeeperThanThreeAreRefused() throws {
        let folder = TemporaryFolder("pmtiles-deep")
        // Each leaf points at the next; the fourth leaf's entry would be a fourth level down.
        var archive = Archive()
        var leaves = Data()
        for _ in 0..<4 {
            let leaf = PMTiles.directory([PMTiles.Entry(tileID: 0, offset: UInt64(leaves.count + 64), length: 64, runLength: 0)])
            // Pad each leaf to 64 bytes so the next one starts where the entry says.
            leaves += leaf + Data(repeating: 0, count: 64 - leaf.count)
        }
        archive.leaves = leaves
        archive.root = PMTiles.directory([PMTiles.Entry(tileID: 0, offset: 0, length: 64, runLength: 0)])
        let error = try #require(Self.convert(try archive.write(to: folder), in: folder))
        #expect(error.contains("(depth 3): the entry for tile id 0 points to a leaf directory deeper than 3 levels"), "\(error)")
    }

    @Test func aDirectoryThatInflatesPastTheBoundIsRefused() throws {
        let folder = TemporaryFolder("pmtiles-bomb")
        var archive = Archive()
        archive.header.internalCompression = .gzip
        archive.metadata = try Zlib.gzip(archive.metadata)
        archive.root = try Zlib.gzip(Data(repeating: 0, count: ImportPMTiles.maxDirectoryBytes + 1), level: 9)
        let error = try #require(Self.convert(try archive.write(to: folder), in: folder))
        #expect(error.contains("the root directory: inflates to more than \(ImportPMTiles.maxDirectoryBytes) bytes"), "\(error)")
    }
}
