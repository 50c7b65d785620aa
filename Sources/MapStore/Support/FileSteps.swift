import Foundation
import MapIO

/// Durable file-tree steps the store's operations are made of.
enum FileSteps {
    /// fsyncs every folder below `root` (deepest first) and `root` itself, so created entries survive power loss.
    static func syncFolders(_ root: String) throws {
        let folders = try DirectoryWalker.walk(root).filter(\.isDirectory).map(\.relativePath)
        for folder in folders.reversed() { try FileSystem.syncDirectory(root + "/" + folder) }
        try FileSystem.syncDirectory(root)
    }

    /// Copies the regular files `paths` (relative) from `source` to `destination` (a move, a linked
    /// install where links fail; the quick install copies as it checks instead), not fsynced: every
    /// caller syncs the whole staged tree (`FileSystem.syncTree`: one `syncfs` on local filesystems)
    /// before a rename shows it; each copy's writeback starts as soon as it is whole (`writeback`),
    /// so that sync finds little left (issue 34). Hard-links instead when `link` is set and both sit
    /// on one filesystem. Calls `copied` with the running byte count after each file; what it
    /// throws stops the copy.
    static func copyFiles(
        _ paths: [(path: String, size: Int64)], from source: String, to destination: String, link: Bool,
        writeback: Writeback = .kernel, copied: (Int64, Int) throws -> Void = { _, _ in }
    ) throws {
        var bytes: Int64 = 0
        for (index, file) in paths.enumerated() {
            let target = destination + "/" + file.path
            let parent = FileSystem.parent(target)
            if !FileSystem.isDirectory(parent) { try FileSystem.makeDirectories(parent) }
            if !link || (try? FileSystem.hardLink(source + "/" + file.path, to: target)) == nil {
                try FileSystem.copyFile(source + "/" + file.path, to: target, sync: false, writeback: writeback)
            }
            bytes += file.size
            try copied(bytes, index)
        }
    }

    /// Replaces `target` with a fsynced copy of `source` (temporary beside it, then rename).
    static func replaceFile(_ target: String, from source: String) throws {
        let parent = FileSystem.parent(target)
        if let info = try FileSystem.status(parent), !info.isDirectory { try FileSystem.removeTree(parent) }
        try FileSystem.makeDirectories(parent)
        let temporary = StagingArea(for: FileSystem.lastComponent(target), kind: .temporary, in: parent)
        try FileSystem.copyFile(source, to: temporary.path)
        if let info = try FileSystem.status(target), info.isDirectory { try FileSystem.removeTree(target) }
        try temporary.commit(as: FileSystem.lastComponent(target))
    }

    /// Removes `path`'s now-empty parent folders up to (not including) `root`.
    static func pruneEmptyFolders(above path: String, root: String) {
        var folder = FileSystem.parent(path)
        while folder.count > root.count, folder.hasPrefix(root + "/") {
            guard (try? DirectoryWalker.entries(of: folder))?.isEmpty == true, FileSystem.removeEmptyFolder(folder) else { break }
            folder = FileSystem.parent(folder)
        }
        try? FileSystem.syncDirectory(folder)
    }

    /// Writes `data` to a new file and fsyncs it.
    static func writeDurably(_ data: Data, to path: String) throws {
        let file = try WritableFile(path: path)
        try file.write(data)
        try file.close(sync: true)
    }
}
