import Foundation
import TestSupport
import Testing

/// `mappack keygen` writes the private key readable by its owner only, from the first byte on,
/// and never through a link planted where the key goes.
@Suite struct KeygenTests {
    private static func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test func privateKeyIsOwnerOnlyAndPublicKeyReadable() throws {
        let folder = TemporaryFolder("keygen")
        let result = try Tool.mappack(["keygen", "--out", folder.join("release")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try KeygenTests.mode(folder.join("release.key")) == 0o600)
        #expect(try KeygenTests.mode(folder.join("release.pub")) == 0o644)
    }

    @Test func forceReplacesAPlantedSymlinkInsteadOfWritingThroughIt() throws {
        let folder = TemporaryFolder("keygen-link")
        // A world-readable file elsewhere that a link at the key's path points to.
        let victim = folder.join("victim.txt")
        try Data("public notes\n".utf8).write(to: URL(fileURLWithPath: victim))
        unsafe chmod(victim, 0o644)
        try FileManager.default.createSymbolicLink(atPath: folder.join("release.key"), withDestinationPath: victim)
        let result = try Tool.mappack(["keygen", "--out", folder.join("release"), "--force"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "public notes\n", "the private key was written through the link")
        #expect(try KeygenTests.mode(victim) == 0o644)
        let type = try FileManager.default.attributesOfItem(atPath: folder.join("release.key"))[.type] as? FileAttributeType
        #expect(type == .typeRegular)
        #expect(try KeygenTests.mode(folder.join("release.key")) == 0o600)
    }

    @Test func forceOverAnOpenKeyFileLeavesItOwnerOnly() throws {
        let folder = TemporaryFolder("keygen-force")
        try Data("old\n".utf8).write(to: URL(fileURLWithPath: folder.join("release.key")))
        unsafe chmod(folder.join("release.key"), 0o644)
        #expect(try Tool.mappack(["keygen", "--out", folder.join("release")]).status == 2)
        let result = try Tool.mappack(["keygen", "--out", folder.join("release"), "--force"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try KeygenTests.mode(folder.join("release.key")) == 0o600)
        #expect(try String(contentsOfFile: folder.join("release.key"), encoding: .utf8) != "old\n")
    }

    /// `--from` a FIFO (issue 41): opening it for reading waited for a writer forever; anything that is
    /// not a regular file is refused at once, exit 2, naming the path.
    @Test func fromAFIFOIsRefusedWithoutWaiting() throws {
        let folder = TemporaryFolder("keygen-fifo")
        let fifo = folder.join("release.key")
        #expect(unsafe mkfifo(fifo, 0o600) == 0)
        let result = try Tool.mappack(["keygen", "--out", folder.join("release"), "--from", fifo], timeout: 20)
        #expect(!result.timedOut, "keygen --from FIFO hung")
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(fifo) && result.stderr.contains("not a regular file"), "\(result.stderr)")
    }
}
