import Foundation
import MapIO

/// A preinstall image shipped with the app: an image folder or its `.tar.zst`.
public struct PreinstalledImage: Sendable, Equatable {
    /// Absolute path of the folder (with `manifest.json` and `store/`) or of the `.tar.zst`.
    public let path: String

    /// The image: a file URL of its folder (with `manifest.json` and `store/`) or of its `.tar.zst`.
    public init(url: URL) { self.path = url.storeFolderPath }

    /// Wraps the image's path.
    @available(*, deprecated, renamed: "init(url:)", message: "pass a file URL")
    public init(path: String) { self.path = FileSystem.absolute(path) }

    /// The image as a file URL.
    public var url: URL { URL(fileURLWithPath: path) }

    /// True for a `.tar.zst` (anything that is not a folder).
    var isArchive: Bool { !FileSystem.isDirectory(path) }
}
