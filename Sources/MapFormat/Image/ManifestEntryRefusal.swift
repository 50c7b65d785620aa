import Foundation

/// A file entry a manifest may not list: a path that is not a `StorePath` (the rule a bundle's
/// entries and a device's store follow too), refused where the manifest is read, or a negative size.
/// The first such entry, in file order, is the one reported.
public enum ManifestEntryRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// The entry's path, as written, breaks `problem`.
    case notStorePath(path: String, StorePath.Problem)
    /// The entry's size is below zero.
    case negativeSize(path: StorePath)

    /// `path` as an entry's path, or why a manifest may not list it.
    static func check(path: String) -> Result<StorePath, ManifestEntryRefusal> {
        do { return .success(try StorePath(validating: path)) } catch { return .failure(.notStorePath(path: path, error)) }
    }

    public var description: String {
        switch self {
        case .notStorePath(let path, let problem):
            "file entry '\(path)' is not a path inside the store (\(problem)); the manifest was edited or written by another tool"
        case .negativeSize(let path): "file entry '\(path)' has a negative size"
        }
    }
}
