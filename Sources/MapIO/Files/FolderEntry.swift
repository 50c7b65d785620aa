import Foundation

/// A path relative to a folder that stays inside it, checked once where it is made: not absolute,
/// no NUL, no empty, `.` or `..` component. The renames that run against a folder's descriptor
/// (`FileSystem.rename(_:to:inFolder:)`, so `StagingArea` and `Trash`) take one, so nothing they
/// rename can reach outside the folder, whatever the names were built from.
package struct FolderEntry: Sendable, Hashable, CustomStringConvertible {
    /// The path, as written.
    package let path: String

    /// `text`, or nil when it could leave the folder (or names nothing).
    package init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard !text.hasPrefix("/"), !text.contains("\0"), !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else { return nil }
        path = text
    }

    /// `text` when it is one name in the folder (no `/`), nil otherwise.
    package init?(oneName text: String) {
        guard !text.contains("/") else { return nil }
        self.init(text)
    }

    /// `text`, or the error a rename inside `folder` gives for a name that could leave it.
    package init(_ text: String, inside folder: String) throws(FileError) {
        guard let entry = FolderEntry(text) else { throw FileError(.rename, note: "(not a plain name inside \(folder))", text, code: EINVAL) }
        self = entry
    }

    package var description: String { path }
}
