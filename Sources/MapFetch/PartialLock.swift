import Foundation
import MapIO

/// An exclusive `flock` on `<partial>.lock`, so two fetchers (threads or processes) sharing one cache
/// never write the same partial file; the second waits and then finds the bundle cached.
final class PartialLock: Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// Takes the lock at `path` without blocking; nil when someone else holds it.
    static func tryAcquire(_ path: String) throws(FileError) -> PartialLock? {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        if fd < 0 { throw FileError("open", path) }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            let code = errno
            close(fd)
            if code == EWOULDBLOCK { return nil }
            throw FileError("flock", path, code: code)
        }
        return PartialLock(descriptor: fd)
    }
}
