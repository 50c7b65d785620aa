import Foundation

extension FileSystem {
    /// Makes `path` a hard link to `existing` (`link(2)`); false when it cannot (another filesystem,
    /// `path` exists, no such file), and the caller copies instead.
    package static func hardLink(_ path: String, to existing: String) -> Bool {
        link(existing, path) == 0
    }

    /// Removes the folder `path` when it is empty (`rmdir(2)`); false when it is not, or is absent.
    @discardableResult
    package static func removeEmptyFolder(_ path: String) -> Bool {
        rmdir(path) == 0
    }
}
