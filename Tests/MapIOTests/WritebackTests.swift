import Foundation
import MapFormat
import MapIO
import TestSupport
import Testing

/// The extractor starts each finished file's writeback (issue 34), so the sync that makes their tree
/// durable finds little left: counted through the `Writeback` seam, not timed.
@Suite struct WritebackTests {
    @Test func extractionStartsTheWritebackOfEveryFileItWrites() throws {
        let folder = TemporaryFolder("writeback-extract")
        let archive = folder.join("bundle.tar.zst")
        let writer = try ArchiveWriter(path: archive, mtime: 0, level: 3)
        try writer.addDirectory("regions")
        try writer.addFile("regions/a.db", data: Data(repeating: 7, count: 300_000))
        try writer.addFile("regions/b.db", data: Data("b".utf8))
        try writer.addFile("regions/deep/empty", data: Data())
        try writer.finish()
        let limits = ExtractionLimits(maxBytes: 1 << 20, maxEntries: 10)

        let started = Writeback.Counter()
        let out = folder.join("out")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let files = try SafeExtractor(limits: limits, writeback: .counting(into: started)).extract(archive: archive, into: out)
        #expect(files.map(\.path.string) == ["regions/a.db", "regions/b.db", "regions/deep/empty"])
        #expect(started.count == 3, "one per file, none for folders")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out + "/regions/a.db")) == Data(repeating: 7, count: 300_000))

        // A listing writes nothing, so it starts nothing.
        _ = try SafeExtractor(limits: limits, writeback: .counting(into: started)).list(archive: archive)
        #expect(started.count == 3)
    }
}
