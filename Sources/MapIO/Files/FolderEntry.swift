import Foundation
import MapFormat

/// A path relative to a folder that stays inside it, checked once where it is made: not absolute,
/// no NUL, no empty, `.` or `..` component. The renames that run against a folder's descriptor
/// (`FileSystem.rename(_:to:inFolder:)`, so `StagingArea` and `Trash`) take one, so nothing they
/// rename can reach outside the folder, whatever the names were built from.
///
/// The rule is a store path's (`StorePath.problem(_:rules:)`, `.insideFolder`), checked on the bytes
/// as the kernel reads them, but for one difference: a folder entry may hold a backslash and be
/// longer than `StorePath.maxLength` bytes. Its names are files on this machine's disk, an output
/// the user named among them (`mappack keygen`'s key file, a build's or a publish's output, and the
/// staging and trash entries named after it), where a backslash is an ordinary byte.
package struct FolderEntry: Sendable, Hashable, CustomStringConvertible {
    /// The path, as written.
    package let path: String

    /// `text`, or nil when it could leave the folder (or names nothing).
    package init?(_ text: String) {
        guard StorePath.problem(text, rules: .insideFolder) == nil else { return nil }
        path = text
    }

    /// `text` when it is one name in the folder (no `/`), nil otherwise.
    package init?(oneName text: String) {
        guard !text.utf8.contains(UInt8(ascii: "/")) else { return nil }
        self.init(text)
    }

    /// `text`, or the error a rename inside `folder` gives for a name that could leave it.
    package init(_ text: String, inside folder: String) throws(FileError) {
        guard let entry = FolderEntry(text) else { throw FileError(.rename, note: "(not a plain name inside \(folder))", text, code: EINVAL) }
        self = entry
    }

    package var description: String { path }
}
