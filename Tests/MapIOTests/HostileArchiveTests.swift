import Foundation
import MapFormat
import MapIO
import TestSupport
import Testing

@Suite struct HostileArchiveTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let archive: String
        let expected: @Sendable (ArchiveError) -> Bool
        var testDescription: String { archive }
    }

    static let cases: [Case] = [
        Case(archive: "dotdot") { if case .unsafePath(let e, _) = $0 { e == "../evil-dotdot.txt" } else { false } },
        Case(archive: "absolute") { if case .unsafePath(let e, _) = $0 { e == "/tmp/mappack-evil-absolute.txt" } else { false } },
        Case(archive: "symlink") { $0 == .forbiddenType(entry: "link", type: "symbolic link") },
        Case(archive: "hardlink") { $0 == .forbiddenType(entry: "hard", type: "hard link") },
        Case(archive: "chardev") { $0 == .forbiddenType(entry: "dev", type: "character device") },
        Case(archive: "fifo") { $0 == .forbiddenType(entry: "pipe", type: "FIFO") },
        Case(archive: "duplicate") { $0 == .duplicatePath(entry: "a.txt") },
        Case(archive: "case") { $0 == .collidingPath(entry: "dir/README", earlier: "dir/Readme") },
        Case(archive: "normalization") { if case .collidingPath = $0 { true } else { false } },
        Case(archive: "invalid_utf8") { if case .invalidName = $0 { true } else { false } },
        Case(archive: "under_file") { $0 == .underFile(entry: "a/b", file: "a") },
        Case(archive: "under_file_deep") { $0 == .underFile(entry: "r/x/f/g", file: "r/x/f") },
        Case(archive: "file_over_folder") { $0 == .duplicatePath(entry: "r/x") },
        Case(archive: "case_deep") { $0 == .collidingPath(entry: "r/Sub/README", earlier: "r/sub/Readme") },
        Case(archive: "bad_checksum") { if case .malformed = $0 { true } else { false } },
        Case(archive: "huge_size") { if case .malformed = $0 { true } else { false } },
        Case(archive: "bad_pax") { if case .malformed = $0 { true } else { false } },
        Case(archive: "pax_sparse") { $0 == .forbiddenType(entry: "holes.bin", type: "sparse file") },
        Case(archive: "type_S") { $0 == .forbiddenType(entry: "old-sparse", type: "file of type 'S'") },
        Case(archive: "bomb") { $0 == .tooLarge(entry: "zeros.bin", limit: 1 << 20) },
        Case(archive: "million") { if case .tooManyEntries = $0 { true } else { false } },
        Case(archive: "window31") { $0 == .windowTooLarge(limitLog: 27) },
        Case(archive: "truncated") { if case .zstd = $0 { true } else if case .malformed = $0 { true } else { false } },
    ]

    /// Also with the files written by a second thread (`pipelined`, what a build unpacks with).
    @Test(arguments: cases, [false, true])
    func refusesHostileArchiveAndWritesNothingOutside(_ testCase: Case, pipelined: Bool) throws {
        let archive = HostileArchives.path(testCase.archive)
        let sandbox = TemporaryFolder("sandbox")
        let destination = sandbox.join("staging")
        let decoy = sandbox.join("decoy")
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: decoy, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: decoy + "/keep.txt"))
        let before = try DirectoryWalker.walk(sandbox.path).map(\.relativePath)

        var extractor = SafeExtractor(limits: ExtractionLimits(maxBytes: 1 << 20, maxEntries: 1000))
        extractor.pipelined = pipelined
        var caught: ArchiveError?
        do { _ = try extractor.extract(archive: archive, into: destination) } catch { caught = error }
        let error = try #require(caught)
        #expect(testCase.expected(error), "got \(error)")
        #expect(!"\(error)".isEmpty)

        // Nothing outside (the decoy, the sandbox, /tmp) and nothing left inside the staging folder.
        #expect(try DirectoryWalker.walk(sandbox.path).map(\.relativePath) == before)
        #expect(!FileManager.default.fileExists(atPath: "/tmp/mappack-evil-absolute.txt"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.join("evil-dotdot.txt")))
    }

    /// The tar reader understands the dialects writers produce: pax paths, GNU long names, the ustar
    /// prefix, base-256 sizes; file data that spans its buffers and ends on and off block boundaries.
    @Test(arguments: ["dialect_pax", "dialect_gnu", "dialect_ustar", "dialect_base256"])
    func readsEveryTarDialect(_ name: String) throws {
        let expected = try HostileArchives.listing(name)
        let folder = TemporaryFolder(name)
        let files = try SafeExtractor(limits: ExtractionLimits(maxBytes: 1 << 20, maxEntries: 100))
            .extract(archive: HostileArchives.path(name), into: folder.path)
        #expect(files.count == expected.count && !files.isEmpty)
        for file in files {
            let want = try #require(expected[file.path.string], "unexpected \(file.path)")
            #expect(file.size == want.size && file.sha256.hex == want.sha256, "\(file.path)")
            let written = try Data(contentsOf: URL(fileURLWithPath: folder.join(file.path.string)))
            #expect(SHA256.hex(written) == want.sha256, "\(file.path) on disk")
        }
    }

    @Test func setuidBitsAndOwnersAreNeverApplied() throws {
        let folder = TemporaryFolder("setuid")
        let files = try SafeExtractor(limits: ExtractionLimits(maxBytes: 1 << 20, maxEntries: 100))
            .extract(archive: HostileArchives.path("setuid"), into: folder.path)
        #expect(files.map(\.path.string) == ["tool"])
        var info = stat()
        unsafe #expect(stat(folder.join("tool"), &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o644)
    }

    @Test func goodArchiveExtractsWithDigests() throws {
        let folder = TemporaryFolder("good")
        let files = try SafeExtractor(limits: ExtractionLimits(maxBytes: 5000, maxEntries: 10))
            .extract(archive: HostileArchives.path("good"), into: folder.path)
        #expect(files.map(\.path.string) == ["regions/x/empty", "regions/x/tiles.db"])
        #expect(files[1].sha256 == SHA256.digest(Data(repeating: UInt8(ascii: "t"), count: 5000)))
        // One byte under the real size is refused at that byte.
        let tight = TemporaryFolder("tight")
        #expect(throws: ArchiveError.tooLarge(entry: "regions/x/tiles.db", limit: 4999)) {
            _ = try SafeExtractor(limits: ExtractionLimits(maxBytes: 4999, maxEntries: 10)).extract(
                archive: HostileArchives.path("good"), into: tight.path)
        }
        #expect(try DirectoryWalker.walk(tight.path).isEmpty)
    }
}
