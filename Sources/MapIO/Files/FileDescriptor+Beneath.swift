import Foundation

extension FileDescriptor {
    /// Opens `relative` (parts separated by `/`) for reading under the folder `root`, following no
    /// symbolic link below it: each folder is opened relative to the one before with `O_DIRECTORY`
    /// and `O_NOFOLLOW`, the file with `O_NOFOLLOW` and `O_NONBLOCK`, and it must be a regular file.
    /// A link on the way (`ELOOP`, or `ENOTDIR` for a link to a folder), an empty, `.` or `..` part
    /// (`EINVAL`) or another kind of file (`EINVAL`) is refused. `root` itself may be reached through
    /// links (a storage folder under a linked home). For readers that must stay inside a folder
    /// whatever was planted in it (`mappack serve`, issue 41).
    package static func openRegularFileBeneath(_ root: String, _ relative: String) throws(Errno) -> FileDescriptor {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard !parts.isEmpty, parts.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else { throw Errno(EINVAL) }
        var folder = try unsafe open(root, .readOnly, options: [.directory, .followLinks])
        for part in parts.dropLast() {
            let next: FileDescriptor
            do { next = try unsafe open(at: folder, String(part), .readOnly, options: .directory) } catch {
                try? folder.close()
                throw error
            }
            try? folder.close()
            folder = next
        }
        defer { try? folder.close() }
        let file = try unsafe open(at: folder, String(parts.last!), .readOnly, options: .nonBlocking)
        let info: FileSystem.Status
        do { info = try file.status() } catch {
            try? file.close()
            throw error
        }
        guard info.isRegular else {
            try? file.close()
            throw Errno(EINVAL)
        }
        return file
    }
}

extension FileSystem {
    /// True when `relative` under `root` is a regular file reached without following a link below
    /// `root` (`FileDescriptor.openRegularFileBeneath`); false for a link, a missing file, anything else.
    package static func isRegularFileBeneath(_ root: String, _ relative: String) -> Bool {
        guard let file = try? FileDescriptor.openRegularFileBeneath(root, relative) else { return false }
        try? file.close()
        return true
    }
}
