import Foundation
import MapIO
import TestSupport
import Testing

@testable import MapStore

/// The plain copies a device's linked install and move make start each file's writeback as soon as the
/// file is whole (issue 34), as the extractor does, so the sync before the rename finds little
/// left: counted through the `Writeback` seam, not timed.
@Suite struct CopyWritebackTests {
    private func sourceTree(_ folder: TemporaryFolder) throws -> [(path: String, size: Int64)] {
        let files: [(String, Int)] = [("regions/a.db", 300_000), ("regions/b.db", 1), ("regions/deep/empty", 0)]
        for (path, size) in files {
            let full = folder.join("source/" + path)
            try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(repeating: 7, count: size).write(to: URL(fileURLWithPath: full))
        }
        return files.map { ($0.0, Int64($0.1)) }
    }

    @Test func copyingStartsTheWritebackOfEveryFileItCopies() throws {
        let folder = TemporaryFolder("copy-writeback")
        let files = try sourceTree(folder)
        let started = Writeback.Counter()
        try FileSteps.copyFiles(files, from: folder.join("source"), to: folder.join("copy"), link: false, writeback: .counting(into: started))
        #expect(started.count == 3, "one per file copied")
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.join("copy/regions/a.db"))) == Data(repeating: 7, count: 300_000))
    }

    @Test func linkingStartsNoWriteback() throws {
        let folder = TemporaryFolder("link-writeback")
        let files = try sourceTree(folder)
        let started = Writeback.Counter()
        try FileSteps.copyFiles(files, from: folder.join("source"), to: folder.join("linked"), link: true, writeback: .counting(into: started))
        #expect(started.count == 0, "a hard link writes no data")
        #expect(FileManager.default.fileExists(atPath: folder.join("linked/regions/deep/empty")))
    }
}
