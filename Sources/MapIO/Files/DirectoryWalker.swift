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
        guard let dir = unsafe opendir(path) else { throw FileError(.opendir, path) }
        defer { unsafe closedir(dir) }
        var names: [String] = []
        while let entry = unsafe readdir(dir) {
            let name = unsafe withUnsafeBytes(of: entry.pointee.d_name) { raw in
                unsafe String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
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
