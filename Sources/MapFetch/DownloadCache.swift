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
    package init(root: String, durable: Bool = true) {
        self.root = root
        self.durable = durable
    }

    /// Creates `folder` (and parents) unless this process already did. Every folder from the root
    /// down to `folder` must be a real folder: a symbolic link planted in the cache would send
    /// partial files and bundles elsewhere.
    func ensureFolder(_ folder: String) throws(FileError) {
        if folders.contains(folder) { return }
        try FileSystem.makeDirectories(folder)
        var current = folder
        while current.count > root.count && current.hasPrefix(root + "/") {
            guard let status = try FileSystem.status(current), status.isDirectory else {
                throw FileError(.useAsCacheFolder, note: "(it is a symbolic link or not a folder; remove it)", current, code: ELOOP)
            }
            current = FileSystem.parent(current)
        }
        folders.insert(folder)
    }

    /// Refuses a cache that other users could write into: the root (and its `sha256` and `partial`
    /// folders, when present) must belong to this user and not be writable by others, and the
    /// folders inside must not be symbolic links. Nothing to check when the cache does not exist yet.
    package func checkOwnership() throws(CacheFolderError) {
        var info = stat()
        for (path, follow) in [(root, true), (root + "/sha256", false), (root + "/partial", false)] {
            let found = unsafe follow ? stat(path, &info) == 0 : lstat(path, &info) == 0
            guard found else { continue }
            let type = info.st_mode & S_IFMT
            if type == S_IFLNK { throw CacheFolderError(path: path, reason: "is a symbolic link") }
            if type != S_IFDIR { throw CacheFolderError(path: path, reason: "is not a folder") }
            if info.st_uid != geteuid() {
                throw CacheFolderError(path: path, reason: "belongs to user \(info.st_uid), not to this user (\(geteuid()))")
            }
            if info.st_mode & S_IWOTH != 0 {
                throw CacheFolderError(path: path, reason: "is writable by other users (mode \(String(info.st_mode & 0o7777, radix: 8)))")
            }
        }
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

    /// True when the verified bundle is present, as a regular file (a symbolic link never counts).
    package func contains(_ digest: BundleDigest) -> Bool { ((try? FileSystem.status(path(for: digest))) ?? nil)?.isRegular ?? false }

    /// Moves a verified, closed file into the cache by atomic rename (flushed first and after when durable).
    package func admit(verifiedFile: String, digest: BundleDigest) throws(FileError) {
        let target = path(for: digest)
        try ensureFolder(FileSystem.parent(target))
        // Only a regular file enters the cache, never a link to one.
        guard let status = try FileSystem.status(verifiedFile), status.isRegular else {
            throw FileError(.admit, note: "to the cache (not a regular file)", verifiedFile, code: ELOOP)
        }
        if durable { try FileSystem.syncFile(verifiedFile) }
        try FileSystem.rename(verifiedFile, to: target)
        if durable { try FileSystem.syncDirectory(FileSystem.parent(target)) }
    }

    /// Removes a cached bundle found damaged, so the next run fetches it again.
    package func evict(_ digest: BundleDigest) throws(FileError) {
        try FileSystem.removeFile(path(for: digest))
    }
}
