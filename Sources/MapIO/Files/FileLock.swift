import Foundation

/// An exclusive `flock`, held until this value is gone: two fetchers sharing one cache never write
/// the same partial file (`<partial>.lock`), and two builds never write one output folder at once
/// (a lock on the folder itself).
package final class FileLock: Sendable {
    private let descriptor: FileDescriptor

    private init(descriptor: FileDescriptor) { self.descriptor = descriptor }

    deinit { try? descriptor.close() }

    /// Takes the lock at `path` (a lock file, made if missing; or with `folder`, the folder itself,
    /// so nothing is added to it) without blocking; nil when someone else holds it.
    package static func tryAcquire(_ path: String, folder: Bool = false) throws(FileError) -> FileLock? {
        let file: FileDescriptor
        do {
            file =
                folder ? try FileDescriptor.open(path, .readOnly, options: .directory) : try FileDescriptor.open(path, .readWrite, options: .create)
        } catch { throw FileError("open", path, code: error.code) }
        do {
            if try file.tryLock() { return FileLock(descriptor: file) }
            try? file.close()
            return nil
        } catch {
            try? file.close()
            throw FileError("flock", path, code: error.code)
        }
    }
}
