import Foundation
import MapIO
import TestSupport
import Testing

/// `FileDescriptor`, the one typed descriptor every file and folder is opened through: links are
/// refused and descriptors closed on exec unless asked otherwise, interrupted calls are retried.
@Suite struct FileDescriptorTests {
    @Test func refusesLinkUnlessAskedToFollow() throws {
        let folder = TemporaryFolder("fd-link")
        try Data("target".utf8).write(to: URL(fileURLWithPath: folder.join("target")))
        unsafe #expect(symlink(folder.join("target"), folder.join("link")) == 0)
        #expect(throws: Errno(ELOOP)) { try unsafe FileDescriptor.open(folder.join("link"), .readOnly) }
        let followed = try unsafe FileDescriptor.open(folder.join("link"), .readOnly, options: .followLinks)
        defer { try? followed.close() }
        #expect(try followed.status().isRegular)
    }

    @Test func closesOnExecByDefault() throws {
        let folder = TemporaryFolder("fd-cloexec")
        let file = try unsafe FileDescriptor.open(folder.join("new"), .writeOnly, options: [.create, .exclusive])
        defer { try? file.close() }
        #expect(fcntl(file.rawValue, F_GETFD) & FD_CLOEXEC != 0)
        #expect(throws: Errno(EEXIST)) { try unsafe FileDescriptor.open(folder.join("new"), .writeOnly, options: [.create, .exclusive]) }
    }

    @Test func opensRelativeToAFolder() throws {
        let folder = TemporaryFolder("fd-at")
        let directory = try unsafe FileDescriptor.open(folder.path, .readOnly, options: .directory)
        defer { try? directory.close() }
        try unsafe directory.makeDirectory("sub")
        let file = try unsafe FileDescriptor.open(at: directory, "sub/data", .readWrite, options: [.create, .truncate], permissions: 0o600)
        defer { try? file.close() }
        let bytes: [UInt8] = Array("hello, descriptor".utf8)
        try unsafe bytes.withUnsafeBytes { raw in try unsafe file.writeAll(raw) }
        try file.sync()
        var back = [UInt8](repeating: 0, count: 10)
        try unsafe back.withUnsafeMutableBytes { raw in try unsafe file.readAll(fromAbsoluteOffset: 7, into: raw) }
        #expect(String(decoding: back, as: UTF8.self) == "descriptor")
        let status = try unsafe directory.status(ofEntry: "sub/data")
        #expect(status.isRegular && status.size == Int64(bytes.count))
        try unsafe directory.rename("sub/data", to: "moved")
        #expect(FileManager.default.fileExists(atPath: folder.join("moved")))
    }

    @Test func readAllPastTheEndIsAnError() throws {
        let folder = TemporaryFolder("fd-short")
        try Data("abc".utf8).write(to: URL(fileURLWithPath: folder.join("short")))
        let file = try unsafe FileDescriptor.open(folder.join("short"), .readOnly)
        defer { try? file.close() }
        var buffer = [UInt8](repeating: 0, count: 8)
        #expect(throws: Errno(EIO)) { try unsafe buffer.withUnsafeMutableBytes { raw in try unsafe file.readAll(fromAbsoluteOffset: 0, into: raw) } }
    }

    @Test func retriesInterruptedCallsOnly() throws {
        var calls = 0
        let value = try FileDescriptor.retryOnInterrupt { () -> Int in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 42
        }
        #expect(value == 42 && calls == 3)
        calls = 0
        #expect(throws: Errno(EBADF)) {
            try FileDescriptor.retryOnInterrupt { () -> Int32 in
                calls += 1
                errno = EBADF
                return -1
            }
        }
        #expect(calls == 1)
    }

    @Test func takesALockOnce() throws {
        let folder = TemporaryFolder("fd-lock")
        let first = try unsafe FileDescriptor.open(folder.join("lock"), .readWrite, options: .create)
        let second = try unsafe FileDescriptor.open(folder.join("lock"), .readWrite)
        defer {
            try? first.close()
            try? second.close()
        }
        #expect(try first.tryLock())
        #expect(try !second.tryLock())
    }

    @Test func unnamedTemporaryFileLeavesNoName() throws {
        let folder = TemporaryFolder("fd-scratch")
        let file = try FileDescriptor.unnamedTemporaryFile(in: folder.path, prefix: "scratch-")
        defer { try? file.close() }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        try unsafe Array("kept".utf8).withUnsafeBytes { raw in try unsafe file.writeAll(toAbsoluteOffset: 0, raw) }
        var back = [UInt8](repeating: 0, count: 4)
        try unsafe back.withUnsafeMutableBytes { raw in try unsafe file.readAll(fromAbsoluteOffset: 0, into: raw) }
        #expect(back == Array("kept".utf8))
    }
}
