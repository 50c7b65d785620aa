import Foundation
import MapFormat
import MapIO
import TestSupport
import Testing

@Suite struct ExtractorDigestTests {
    func archive(in folder: TemporaryFolder) throws -> String {
        let path = folder.join("bundle.tar.zst")
        let writer = try ArchiveWriter(path: path, mtime: 0, level: 3)
        try writer.addDirectory("regions")
        try writer.addFile("regions/a.db", data: Data(repeating: 7, count: 5000))
        try writer.addFile("regions/b.db", data: Data("b".utf8))
        try writer.finish()
        return path
    }

    @Test func matchingDigestExtractsAndMismatchRollsBack() throws {
        let folder = TemporaryFolder("digest")
        let path = try archive(in: folder)
        let digest = try SHA256.digestOfFile(path).digest
        let extractor = SafeExtractor(limits: ExtractionLimits(maxBytes: 1 << 20, maxEntries: 10))

        let good = folder.join("good")
        try FileManager.default.createDirectory(atPath: good, withIntermediateDirectories: true)
        let files = try extractor.extract(archive: path, into: good, expectedDigest: digest)
        #expect(files.map(\.path.string) == ["regions/a.db", "regions/b.db"])

        let bad = folder.join("bad")
        try FileManager.default.createDirectory(atPath: bad, withIntermediateDirectories: true)
        let wrong = try #require(SHA256Digest(hex: String(repeating: "0", count: 64)))
        #expect(throws: ArchiveError.digestMismatch(expected: wrong, actual: digest)) {
            try extractor.extract(archive: path, into: bad, expectedDigest: wrong)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: bad).isEmpty, "a refused archive leaves nothing behind")
    }

    @Test func bytesAfterTheTarEndAreCoveredByTheDigest() throws {
        // The digest is of the whole file: bytes appended after the archive, which the tar reader
        // never needs, still make the stored file differ from the digest it was fetched under.
        let folder = TemporaryFolder("digest-tail")
        let path = try archive(in: folder)
        let original = try SHA256.digestOfFile(path).digest
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 0, count: 3))
        try handle.close()
        let extractor = SafeExtractor(limits: ExtractionLimits(maxBytes: 1 << 20, maxEntries: 10))
        let destination = folder.join("out")
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
        #expect(throws: (any Error).self) { try extractor.extract(archive: path, into: destination, expectedDigest: original) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: destination).isEmpty)
    }

    @Test func poolRunsMoreJobsThanCoresEvenWhenSomeBlock() async throws {
        // Eight jobs that each wait for all eight to have started: only a pool that starts a thread
        // per waiting job (rather than one per core) finishes them.
        let started = Counter()
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<8 {
                group.addTask {
                    try await BlockingPool.run {
                        started.increment()
                        let deadline = Date().addingTimeInterval(30)
                        while started.value < 8 && Date() < deadline { usleep(1000) }
                        return started.value >= 8 ? index : -1
                    }
                }
            }
            var all: [Int] = []
            for try await value in group { all.append(value) }
            return all.sorted()
        }
        #expect(results == Array(0..<8))
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() {
        lock.lock()
        count += 1
        lock.unlock()
    }
    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}
