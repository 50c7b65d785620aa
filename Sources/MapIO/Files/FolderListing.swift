import Foundation

/// Lists folders one level deep, each entry with whether it is a regular file, through one reused
/// `getdents64` buffer (`DirectoryEntryReader`): asking a folder for its names costs one system
/// call per few hundred entries, where an `lstat` per expected name costs one each.
package struct FolderListing {
    /// One entry of a folder.
    package struct Entry: Sendable {
        /// The entry's name (no `/`).
        package let name: String
        /// True for a regular file, as `lstat` would say (a symbolic link is not one).
        package let isRegular: Bool
    }

    private var reader = DirectoryEntryReader()

    package init() {}

    /// The entries of the folder at `path`, unsorted, without `.` and `..`; nil when it holds more
    /// than `limit`. A symbolic link at `path` is followed, as a path through it is. Throws when no
    /// folder can be opened there (`ENOENT`, `ENOTDIR`, `EACCES`, …).
    package mutating func entries(of path: String, limit: Int) throws(FileError) -> [Entry]? {
        let folder: FileDescriptor
        do throws(Errno) { folder = try unsafe FileDescriptor.open(path, .readOnly, options: [.directory, .followLinks]) } catch {
            throw FileError(.open, path, code: error.code)
        }
        defer { try? folder.close() }
        var entries: [Entry] = []
        var tooMany = false
        let failure = unsafe reader.forEachEntry(of: folder) { name, length, type -> FileError? in
            if entries.count >= limit {
                tooMany = true
                return FileError(.list, path, code: E2BIG)
            }
            var regular = type == UInt8(DT_REG)
            if type == UInt8(DT_UNKNOWN) { regular = (try? unsafe folder.status(ofEntry: name))?.isRegular ?? false }
            let text = unsafe String(decoding: UnsafeRawBufferPointer(start: name, count: length), as: UTF8.self)
            entries.append(Entry(name: text, isRegular: regular))
            return nil
        }
        if tooMany { return nil }
        if let failure { throw failure }
        return entries
    }
}
