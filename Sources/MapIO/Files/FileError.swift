import Foundation

/// A file system call that failed: which call, which path, which errno.
package struct FileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was being done to the file: a system call, or a step of this project's own that refuses
    /// a file (`commit`, `reuse`, `takeIn`). The raw value is the word messages print.
    package enum Operation: String, Sendable {
        case admit, clone, close, commit, create, flock, fstat, fsync, link, list, lstat, mkdir, mkstemp, open, opendir, pread, pwrite
        case process, read, rename, reuse, rmdir, stat, statvfs, syncfs, unlink, write
        case takeIn = "take in"
        case useAsCacheFolder = "use as a cache folder"
    }

    /// The call or step that failed.
    package let operation: Operation
    /// What the message adds after the operation's word, as written: the reason a file was refused
    /// (`"(file ends early)"`) or the other end of the call (`"to /a/b"`).
    package let note: String?
    /// The path concerned.
    package let path: String
    /// `errno` at the failure.
    package let cause: Errno

    /// `errno`'s value, for comparisons with `ENOENT`, `ENOSPC` and the like.
    package var code: Int32 { cause.code }

    /// The operation as messages say it: its word and the note.
    package var action: String { note.map { "\(operation.rawValue) \($0)" } ?? operation.rawValue }

    /// Captures the current `errno` unless `code` is given.
    package init(_ operation: Operation, note: String? = nil, _ path: String, code: Int32 = errno) {
        self.operation = operation
        self.note = note
        self.path = path
        self.cause = Errno(code)
    }

    /// True when the file was not there.
    package var isNotFound: Bool { code == ENOENT }

    package var description: String {
        let hint: String
        switch code {
        case ENOSPC: hint = "; free space on that filesystem"
        case EDQUOT: hint = "; the disk quota is used up: free space or choose a folder elsewhere"
        case EACCES, EPERM: hint = "; check the permissions"
        case EROFS: hint = "; that filesystem is read-only: choose a folder on a writable one"
        case ENOTDIR: hint = "; a part of the path is a file, not a folder"
        case ENOENT: hint = ""
        default: hint = ""
        }
        return "\(path): \(action) failed: \(cause)\(hint)"
    }
}

extension FileError {
    /// The write failed for want of space: `ENOSPC`, or `EDQUOT` (a quota used up).
    package var isOutOfSpace: Bool { code == ENOSPC || code == EDQUOT }

    /// The write in `error` that found its filesystem full, however the layer below carried it: a
    /// file's (`isOutOfSpace`), an archive's (`ArchiveError.io`), or SQLite's `SQLITE_FULL` (as
    /// `ENOSPC` on the database's path); nil for any other error. Builds, imports and the store each
    /// say a full disk as one failure from this.
    package static func outOfSpace(in error: any Error) -> FileError? {
        var file = error as? FileError
        if case ArchiveError.io(let inner)? = error as? ArchiveError { file = inner }
        if let database = error as? SQLiteError, database.isDiskFull { file = FileError(.write, database.path, code: ENOSPC) }
        guard let file, file.isOutOfSpace else { return nil }
        return file
    }
}
