import Foundation
import MapIO

/// An exclusive `flock` on `<partial>.lock`, so two fetchers (threads or processes) sharing one cache
/// never write the same partial file; the second waits and then finds the bundle cached.
final class PartialLock: Sendable {
    private let descriptor: FileDescriptor

    private init(descriptor: FileDescriptor) { self.descriptor = descriptor }

    deinit { try? descriptor.close() }

    /// Takes the lock at `path` without blocking; nil when someone else holds it.
    static func tryAcquire(_ path: String) throws(FileError) -> PartialLock? {
        let file: FileDescriptor
        do { file = try FileDescriptor.open(path, .readWrite, options: .create) } catch { throw FileError("open", path, code: error.code) }
        do {
            if try file.tryLock() { return PartialLock(descriptor: file) }
            try? file.close()
            return nil
        } catch {
            try? file.close()
            throw FileError("flock", path, code: error.code)
        }
    }
}
