import Foundation

/// A file system call that failed: which call, which path, which errno.
package struct FileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The system call or operation.
    package let operation: String
    /// The path concerned.
    package let path: String
    /// `errno` at the failure.
    package let code: Int32

    /// Captures the current `errno`.
    package init(_ operation: String, _ path: String, code: Int32 = errno) {
        self.operation = operation
        self.path = path
        self.code = code
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
        return unsafe "\(path): \(operation) failed: \(String(cString: strerror(code)))\(hint)"
    }
}
