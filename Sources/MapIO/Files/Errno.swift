import Foundation

/// The `errno` of a failed system call, as `FileDescriptor` throws it. Callers that know the path
/// turn it into a `FileError` (`FileError(.open, path, code: error.code)`).
package struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The `errno` value (`ENOENT`, `ELOOP`, …).
    package let code: CInt

    /// Wraps `code`.
    @inlinable package init(_ code: CInt) { self.code = code }

    package var description: String { unsafe String(cString: strerror(code)) }
}
