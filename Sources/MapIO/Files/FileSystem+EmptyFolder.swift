import Foundation

extension FileSystem {
    /// Removes the folder `path` when it is empty (`rmdir(2)`); false when it is not, or is absent.
    @discardableResult
    package static func removeEmptyFolder(_ path: String) -> Bool {
        unsafe rmdir(path) == 0
    }
}
