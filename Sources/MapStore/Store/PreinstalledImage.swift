import MapIO

/// A preinstall image shipped with the app: an image folder or its `.tar.zst`.
public struct PreinstalledImage: Sendable, Equatable {
    /// Path of the folder (with `manifest.json` and `store/`) or of the `.tar.zst`.
    public let path: String

    /// Wraps the image's path.
    public init(path: String) { self.path = FileSystem.absolute(path) }

    /// True for a `.tar.zst` (anything that is not a folder).
    var isArchive: Bool { !FileSystem.isDirectory(path) }
}
