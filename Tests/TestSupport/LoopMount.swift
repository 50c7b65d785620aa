import Foundation

/// A filesystem image file mounted through a loop device for one test (root only), unmounted by
/// `unmount()` (call it in a `defer`) or, failing that, when released. `mount -o loop` detaches
/// the loop device itself at the unmount.
public final class LoopMount: @unchecked Sendable {
    /// Where it is mounted.
    public let point: String
    private var mounted = true

    /// Whether this process may mount (root).
    public static var canMount: Bool { getuid() == 0 }

    /// Mounts `image` (of `type`) at `point` (made if missing) with `options` besides `loop`.
    public init(image: String, at point: String, type: String, options: [String] = []) throws {
        try FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: true)
        let result = try Tool.run("/usr/bin/mount", ["-t", type, "-o", (["loop"] + options).joined(separator: ","), image, point], timeout: 120)
        guard result.status == 0 else { throw LoopMountError(message: "mount \(image): \(result.stderr)") }
        self.point = point
    }

    /// A new XFS filesystem with reflinks (`mkfs.xfs -m reflink=1`, xfsprogs) of `megabytes` MiB
    /// (sparse; XFS wants at least 300 MiB) in the file `image`, mounted at `point`.
    public static func xfs(image: String, at point: String, megabytes: Int = 320) throws -> LoopMount {
        guard FileManager.default.createFile(atPath: image, contents: nil) else { throw LoopMountError(message: "cannot create \(image)") }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: image))
        try handle.truncate(atOffset: UInt64(megabytes) << 20)
        try handle.close()
        let made = try Tool.run("/usr/sbin/mkfs.xfs", ["-q", "-m", "reflink=1", image], timeout: 120)
        guard made.status == 0 else { throw LoopMountError(message: "mkfs.xfs: \(made.stderr)") }
        return try LoopMount(image: image, at: point, type: "xfs")
    }

    /// A tmpfs of `megabytes` MiB at `point`.
    public static func tmpfs(at point: String, megabytes: Int = 64) throws -> LoopMount {
        try LoopMount(tmpfsAt: point, megabytes: megabytes)
    }

    private init(tmpfsAt point: String, megabytes: Int) throws {
        try FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: true)
        let result = try Tool.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", point], timeout: 120)
        guard result.status == 0 else { throw LoopMountError(message: "mount tmpfs: \(result.stderr)") }
        self.point = point
    }

    /// Unmounts (lazily when busy, so a test's failure never leaves a mount behind); once.
    public func unmount() {
        guard mounted else { return }
        mounted = false
        if (try? Tool.run("/usr/bin/umount", [point], timeout: 120))?.status != 0 {
            _ = try? Tool.run("/usr/bin/umount", ["-l", point], timeout: 120)
        }
    }

    deinit { unmount() }
}

/// A mount a test needs could not be made.
public struct LoopMountError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
