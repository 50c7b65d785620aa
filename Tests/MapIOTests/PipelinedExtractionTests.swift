import Foundation
import MapFormat
import MapIO
import TestSupport
import Testing

/// `SafeExtractor.pipelined` (files written by a second thread, as a build unpacks) gives what the
/// extraction on one thread gives: the same files, digests and bytes, and on a failure the same
/// error and nothing left behind.
@Suite struct PipelinedExtractionTests {
    /// Folders, thousands of small files (many hand-overs), a file larger than a hand-over's buffer
    /// and an empty one.
    func archive(in folder: TemporaryFolder) throws -> String {
        let path = folder.join("bundle.tar.zst")
        let writer = try ArchiveWriter(path: path, mtime: 0, level: 1)
        try writer.addDirectory("regions")
        try writer.addDirectory("regions/r")
        for index in 0..<3000 {
            try writer.addFile(
                "regions/r/\(index / 100)/\(index).bin", data: Data("file \(index) ".utf8) + Data(repeating: UInt8(index % 251), count: index % 700))
        }
        try writer.addFile("regions/big.db", data: Data((0..<700_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
        try writer.addFile("regions/empty.db", data: Data())
        try writer.finish()
        return path
    }

    func extract(_ archive: String, into destination: String, pipelined: Bool) throws -> [ExtractedFile] {
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
        var extractor = SafeExtractor(limits: ExtractionLimits(maxBytes: 1 << 30, maxEntries: 10_000))
        extractor.pipelined = pipelined
        return try extractor.extract(archive: archive, into: destination)
    }

    @Test func writesTheSameFilesAsOneThread() throws {
        let folder = TemporaryFolder("pipelined")
        let path = try archive(in: folder)
        let single = try extract(path, into: folder.join("single"), pipelined: false)
        let pipelined = try extract(path, into: folder.join("pipelined"), pipelined: true)
        #expect(single.count == 3002)
        #expect(pipelined == single)
        let walked = try DirectoryWalker.walk(folder.join("pipelined")).map(\.relativePath)
        #expect(walked == (try DirectoryWalker.walk(folder.join("single")).map(\.relativePath)))
        for file in single {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: folder.join("pipelined") + "/" + file.path.string))
            #expect(SHA256.digest(bytes) == file.sha256, "\(file.path)")
        }
    }

    @Test func aWriteFailureIsTheSameErrorAndRollsBack() throws {
        // A file already at one of the archive's paths: the exclusive create fails there (EEXIST),
        // after hundreds of files were written, and everything this extraction made goes again.
        let folder = TemporaryFolder("pipelined-fail")
        let path = try archive(in: folder)
        var errors: [ArchiveError] = []
        for pipelined in [false, true] {
            let destination = folder.join(pipelined ? "pipelined" : "single")
            try FileManager.default.createDirectory(atPath: destination + "/regions/r/20", withIntermediateDirectories: true)
            try Data("mine".utf8).write(to: URL(fileURLWithPath: destination + "/regions/r/20/2000.bin"))
            do {
                _ = try extract(path, into: destination, pipelined: pipelined)
                Issue.record("extraction over an existing file succeeded (pipelined: \(pipelined))")
            } catch let error as ArchiveError { errors.append(error) }
            #expect(try DirectoryWalker.walk(destination).map(\.relativePath) == ["regions", "regions/r", "regions/r/20", "regions/r/20/2000.bin"])
            #expect(try String(contentsOfFile: destination + "/regions/r/20/2000.bin", encoding: .utf8) == "mine")
        }
        #expect(errors.count == 2)
        if case .io(let failure) = errors[1] {
            #expect(failure.code == EEXIST)
            #expect(failure.path.hasSuffix("/pipelined/regions/r/20/2000.bin"))
        } else {
            Issue.record("expected the create's failure, got \(errors[1])")
        }
    }
}
