import Foundation
import MapIO
import TestSupport
import Testing

/// `FileSystem.copyFile` shares extents (`FICLONE`) where the filesystem can, and copies the bytes
/// where it cannot. Checked with e2fsprogs' `filefrag -v`, which prints `shared` on an extent that
/// two files share, on real filesystems: XFS with reflinks and tmpfs on loop mounts (root), and the
/// temp folder's own filesystem (ext4 here).
@Suite struct ReflinkCopyTests {
    /// Random-looking bytes, so no filesystem could store them compressed or deduplicated.
    static func payload(_ count: Int) -> Data {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return Data(
            (0..<count).map { _ in
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                return UInt8(truncatingIfNeeded: state)
            })
    }

    /// `filefrag -v`'s extent lines of `path`.
    static func extents(_ path: String) throws -> String {
        let result = try Tool.run("/usr/sbin/filefrag", ["-v", path], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    @Test(
        .enabled(if: LoopMount.canMount, "mounting XFS needs root"),
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/sbin/mkfs.xfs"), "needs Debian's xfsprogs (make deps)"))
    func copyOnXFSSharesTheSourcesExtents() throws {
        let folder = TemporaryFolder("reflink-xfs")
        let mount = try LoopMount.xfs(image: folder.join("xfs.img"), at: folder.join("mnt"))
        defer { mount.unmount() }
        let source = mount.point + "/source.db"
        let bytes = ReflinkCopyTests.payload(4 << 20)
        try bytes.write(to: URL(fileURLWithPath: source))
        try FileSystem.syncFile(source)
        let freeBefore = try FileSystem.freeBytes(at: mount.point)

        try FileSystem.copyFile(source, to: mount.point + "/copy.db")
        #expect(try Data(contentsOf: URL(fileURLWithPath: mount.point + "/copy.db")) == bytes)
        #expect(try ReflinkCopyTests.extents(mount.point + "/copy.db").contains("shared"))
        // Four MiB copied, well under one MiB of space used: the data was not written again.
        #expect(freeBefore - (try FileSystem.freeBytes(at: mount.point)) < 1 << 20)

        // Writing to the copy leaves the source as it was (copy on write).
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: mount.point + "/copy.db"))
        try handle.write(contentsOf: Data(repeating: 0, count: 4096))
        try handle.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: source)) == bytes)
    }

    @Test func copyOnTheTempFoldersFilesystemCopiesTheBytes() throws {
        let folder = TemporaryFolder("reflink-fallback")
        let bytes = ReflinkCopyTests.payload(3 << 20 + 123)
        try bytes.write(to: URL(fileURLWithPath: folder.join("source.db")))
        try FileSystem.copyFile(folder.join("source.db"), to: folder.join("copy.db"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.join("copy.db"))) == bytes)
        // An empty file too.
        try Data().write(to: URL(fileURLWithPath: folder.join("empty")))
        try FileSystem.copyFile(folder.join("empty"), to: folder.join("empty-copy"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.join("empty-copy"))).isEmpty)
    }

    @Test(.enabled(if: LoopMount.canMount, "mounting tmpfs needs root"))
    func copyOnTmpfsAndAcrossFilesystemsCopiesTheBytes() throws {
        let folder = TemporaryFolder("reflink-tmpfs")
        let mount = try LoopMount.tmpfs(at: folder.join("mnt"))
        defer { mount.unmount() }
        let bytes = ReflinkCopyTests.payload(2 << 20 + 5)
        try bytes.write(to: URL(fileURLWithPath: mount.point + "/source.db"))
        // tmpfs has no reflinks (EOPNOTSUPP).
        try FileSystem.copyFile(mount.point + "/source.db", to: mount.point + "/copy.db")
        #expect(try Data(contentsOf: URL(fileURLWithPath: mount.point + "/copy.db")) == bytes)
        // Two filesystems (EXDEV).
        try FileSystem.copyFile(mount.point + "/source.db", to: folder.join("copy.db"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.join("copy.db"))) == bytes)
        #expect(!(try ReflinkCopyTests.extents(folder.join("copy.db")).contains("shared")))
    }
}
