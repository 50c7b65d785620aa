import CLinux
import Foundation

extension FileDescriptor {
    /// Makes this file (open for writing) share all of `source`'s data, copy on write: a reflink,
    /// `ioctl(FICLONE)` (`mp_clone_file`), which costs no data writes and no space until either
    /// file changes. True when cloned; false when this filesystem or this pair cannot clone
    /// (`cannotClone`, and always off Linux or with `MAPPACK_PORTABLE`),
    /// for the caller to copy the bytes instead. Any other failure (`ENOSPC`, `EIO`) throws.
    package func cloneContents(of source: FileDescriptor) throws(Errno) -> Bool {
        #if os(Linux) && !MAPPACK_PORTABLE
            if FileDescriptor.reflinksOff { return false }
            if mp_clone_file(rawValue, source.rawValue) == 0 { return true }
            let code = errno
            if FileDescriptor.cannotClone.contains(code) { return false }
            throw Errno(code)
        #else
            return false
        #endif
    }

    /// `MAPPACK_NO_REFLINK` set (any value): every copy copies its bytes, so `make bench` can time
    /// the byte copy on the same filesystem as the reflinks (`Benchmarks/reflink.sh`).
    private static let reflinksOff = ProcessInfo.processInfo.environment["MAPPACK_NO_REFLINK"] != nil

    /// What `FICLONE` answers when the files cannot share extents, rather than a real failure:
    /// no reflink support (`EOPNOTSUPP`; ext4 and tmpfs say `ENOTTY` or `EOPNOTSUPP`), two
    /// filesystems (`EXDEV`), a file the filesystem will not clone (`EINVAL`).
    private static let cannotClone: Set<CInt> = [EOPNOTSUPP, EXDEV, EINVAL, ENOTTY]

    /// `FileSystem.spreadSubfolders` for the folder `name`, relative to this folder unless absolute.
    package func spreadSubfolders(of name: UnsafePointer<CChar>) {
        #if os(Linux) && !MAPPACK_PORTABLE
            guard let folder = try? unsafe FileDescriptor.open(at: self, name, .readOnly, options: .directory) else { return }
            defer { try? folder.close() }
            _ = mp_mark_top_folder(folder.rawValue)
        #endif
    }
}
