import Foundation
import MapFormat
import MapIO
import TestSupport
import Testing

/// What mappack's `ArchiveWriter` (libarchive, pax restricted) packs, mappack's own tar reader reads
/// back: long paths (ustar prefix or pax `path`), non-ASCII names, sizes on and off block boundaries,
/// data that spans the reader's buffers.
@Suite struct ArchiveRoundTripTests {
    static func payload(_ count: Int, seed: Int) -> Data { Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) }) }

    @Test func readerGivesBackWhatTheWriterPacked() throws {
        let folder = TemporaryFolder("roundtrip")
        let longFolder = "d/" + String(repeating: "f", count: 90)
        let files: [(String, Data)] = [
            ("d/empty", Data()),
            ("d/block", Self.payload(512, seed: 1)),
            ("d/block-and-one", Self.payload(513, seed: 2)),
            ("d/" + String(repeating: "x", count: 98), Self.payload(7, seed: 3)),  // exactly 100 bytes
            (longFolder + "/" + String(repeating: "y", count: 99), Self.payload(9, seed: 4)),  // ustar prefix + name
            ("d/" + String(repeating: "z", count: 180), Self.payload(11, seed: 5)),  // needs a pax path
            ("d/Zürich/straße.db", Self.payload(1000, seed: 6)),  // non-ASCII
            ("d/large.bin", Self.payload((1 << 20) + 1, seed: 7)),  // spans several buffers
        ]
        let archive = folder.join("round.tar.zst")
        let writer = try ArchiveWriter(path: archive, mtime: 0)
        try writer.addDirectory("d")
        for (name, data) in files { try writer.addFile(name, data: data) }
        try writer.finish()

        let listed = try SafeExtractor(limits: ExtractionLimits(maxBytes: 8 << 20, maxEntries: 100)).list(archive: archive)
        let expected = try files.map { ExtractedFile(path: try StorePath(validating: $0.0), size: Int64($0.1.count), sha256: SHA256.digest($0.1)) }
            .sorted { $0.path.string.utf8.lexicographicallyPrecedes($1.path.string.utf8) }
        #expect(listed == expected)
    }

    /// The frame is what libarchive's zstd filter wrote before (issue 46: mappack compresses it through a
    /// reused context now): libarchive's own filter (`Tests/Support/libarchive_zstd.py`) over the same
    /// tar at the level gives the same bytes. Archives in a row share a context; each is its own frame.
    /// (The zstd tool is no oracle here: at level 6 its frame of incompressible data is a byte shorter.)
    @Test(arguments: [3, 6]) func compressedArchiveIsLibarchivesFrameOfThePlainTar(level: Int) throws {
        let folder = TemporaryFolder("frame")
        for round in 0..<2 {
            let files: [(String, Data)] = [
                ("d/small", Self.payload(700, seed: round)),
                ("d/large.bin", Self.payload(3 << 20, seed: 9 + round)),  // several zstd blocks
                ("d/random.bin", Data((0..<300_000).map { _ in UInt8.random(in: 0...255) })),
            ]
            for compressed in [false, true] {
                let writer = try ArchiveWriter(
                    path: folder.join("a.tar" + (compressed ? ".zst" : "")), mtime: 7, level: level, compressed: compressed)
                try writer.addDirectory("d")
                for (name, data) in files { try writer.addFile(name, data: data) }
                try writer.finish()
            }
            let tool = try Tool.run(
                "/usr/bin/python3",
                [Tool.repositoryRoot + "/Tests/Support/libarchive_zstd.py", String(level), folder.join("a.tar"), folder.join("tool.zst")],
                timeout: 120)
            try #require(tool.status == 0, "\(tool.stderr)")
            let ours = try Data(contentsOf: URL(fileURLWithPath: folder.join("a.tar.zst")))
            let theirs = try Data(contentsOf: URL(fileURLWithPath: folder.join("tool.zst")))
            #expect(ours == theirs, "round \(round): \(ours.count) bytes against libarchive's \(theirs.count)")
        }
    }
}
