import Foundation
import MapFormat
import MapIO

/// The content-addressed download cache: `<root>/sha256/<ab>/<hex>` holds only verified bundles;
/// `<root>/partial/` holds interrupted downloads for resuming.
///
/// A durable cache (devices) fsyncs each bundle and its folder before and after the rename that
/// admits it, so an admitted bundle survives power loss. A build's cache is not durable: it skips
/// those flushes (four per bundle, most of a cold build's disk waits), and instead every use of a
/// cached bundle re-checks its digest while unpacking (`SafeExtractor`'s `expectedDigest`), so a
/// bundle damaged by a crash is caught, removed and fetched again by the next run.
package struct DownloadCache: Sendable {
    /// The cache folder.
    package let root: String
    /// Whether admitted bundles are flushed to stable storage one by one.
    package let durable: Bool

    /// Folders this process already made sure of.
    private let folders = FolderCache(limit: 1024)

    /// A cache at `root`.
    package init(root: String, durable: Bool = true) { self.root = root; self.durable = durable }

    /// Creates `folder` (and parents) unless this process already did.
    func ensureFolder(_ folder: String) throws(FileError) {
        if folders.contains(folder) { return }
        try FileSystem.makeDirectories(folder)
        folders.insert(folder)
    }

    /// `$XDG_CACHE_HOME/mappack`, or `~/.cache/mappack`.
    package static func defaultRoot() -> String {
        let environment = ProcessInfo.processInfo.environment
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty { return xdg + "/mappack" }
        return (environment["HOME"] ?? NSTemporaryDirectory()) + "/.cache/mappack"
    }

    /// Where a verified bundle lives.
    package func path(for digest: BundleDigest) -> String {
        let hex = digest.hex
        return root + "/sha256/" + hex.prefix(2) + "/" + hex
    }

    /// Where a partial download of `digest` is kept between attempts and runs.
    package func partialPath(for digest: BundleDigest) -> String { "\(root)/partial/\(digest.hex).part" }

    /// The validator (ETag or Last-Modified) of the response a partial download came from, for `If-Range`.
    package func partialMetaPath(for digest: BundleDigest) -> String { "\(root)/partial/\(digest.hex).part.meta" }

    /// The lock file that keeps two fetchers sharing this cache from writing one partial download.
    package func lockPath(for digest: BundleDigest) -> String { "\(root)/partial/\(digest.hex).lock" }

    /// True when the verified bundle is present.
    package func contains(_ digest: BundleDigest) -> Bool { FileSystem.exists(path(for: digest)) }

    /// Moves a verified, closed file into the cache by atomic rename (flushed first and after when durable).
    package func admit(verifiedFile: String, digest: BundleDigest) throws(FileError) {
        let target = path(for: digest)
        try ensureFolder(FileSystem.parent(target))
        if durable { try FileSystem.syncFile(verifiedFile) }
        try FileSystem.rename(verifiedFile, to: target)
        if durable { try FileSystem.syncDirectory(FileSystem.parent(target)) }
    }

    /// Removes a cached bundle found damaged, so the next run fetches it again.
    package func evict(_ digest: BundleDigest) throws(FileError) {
        try FileSystem.removeFile(path(for: digest))
    }
}
