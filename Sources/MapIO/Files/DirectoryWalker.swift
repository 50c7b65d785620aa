import Foundation

/// Directory listings and recursive walks with `opendir`/`readdir` (`lstat` when `d_type` is unknown).
package enum DirectoryWalker {
    /// One entry of a walk.
    package struct Entry: Sendable {
        /// Path relative to the walk's root, `/`-separated.
        package let relativePath: String
        package let isDirectory: Bool
        package let isRegular: Bool
        /// Size in bytes (regular files).
        package let size: Int64
        /// Allocated bytes (`st_blocks * 512`).
        package let allocated: Int64
    }

    /// Names in `path` (without `.` and `..`), sorted bytewise.
    package static func entries(of path: String) throws(FileError) -> [String] {
        guard let dir = opendir(path) else { throw FileError("opendir", path) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// Every file, folder and other entry below `root`, sorted by path bytes, not following symlinks.
    package static func walk(_ root: String) throws(FileError) -> [Entry] {
        var out: [Entry] = []
        try walk(root: root, relative: "", into: &out)
        return out.sorted { $0.relativePath.utf8.lexicographicallyPrecedes($1.relativePath.utf8) }
    }

    private static func walk(root: String, relative: String, into out: inout [Entry]) throws(FileError) {
        let folder = relative.isEmpty ? root : root + "/" + relative
        for name in try entries(of: folder) {
            let rel = relative.isEmpty ? name : relative + "/" + name
            guard let info = try FileSystem.status(root + "/" + rel) else { continue }
            out.append(Entry(relativePath: rel, isDirectory: info.isDirectory, isRegular: info.isRegular, size: info.size, allocated: info.allocated))
            if info.isDirectory { try walk(root: root, relative: rel, into: &out) }
        }
    }
}

extension DirectoryWalker {
    /// Relative paths under `root` of regular files, and of anything that is neither a regular
    /// file nor a folder, from `readdir`'s entry types alone (`lstat` only where the filesystem
    /// does not say): a listing of a large store without a stat per file.
    package static func listing(_ root: String) throws(FileError) -> (files: [String], others: [String]) {
        var files: [String] = [], others: [String] = []
        var pending = [""]
        while let relative = pending.popLast() {
            let folder = relative.isEmpty ? root : root + "/" + relative
            guard let dir = opendir(folder) else { throw FileError("opendir", folder) }
            defer { closedir(dir) }
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
                if name == "." || name == ".." { continue }
                let path = relative.isEmpty ? name : relative + "/" + name
                var type = entry.pointee.d_type
                if type == UInt8(DT_UNKNOWN) {
                    guard let info = try FileSystem.status(root + "/" + path) else { continue }
                    type = info.isDirectory ? UInt8(DT_DIR) : info.isRegular ? UInt8(DT_REG) : UInt8(DT_LNK)
                }
                switch type {
                case UInt8(DT_DIR): pending.append(path)
                case UInt8(DT_REG): files.append(path)
                default: others.append(path)
                }
            }
        }
        return (files, others)
    }
}
