import MapFetch
import MapFormat

/// What a build reports while it works.
package enum BuildEvent: Sendable {
    /// The bundles to put in place, once the ones `--from` reuses are known: `downloadBytes` of
    /// them to download (at most, when chunked updates fetch less), `cached` found in the download
    /// cache, `reused` copied from the old image.
    case planned(bundles: Int, downloadBytes: Int64, cached: Int, reused: Int)
    case fetch(FetchEvent)
    case unpacked(BundleDigest, files: Int)
    case reused(BundleDigest, files: Int)
    /// `--from` with a chunked catalog (issue 21): the bundle was assembled from the old image's
    /// chunks and `downloaded` bytes of ranges (`size` bytes, `reused` of them from the old files),
    /// or, with `fallback`, that was not possible and it is downloaded whole.
    case chunked(BundleDigest, downloaded: Int64, reused: Int64, size: Int64, fallback: String?)
    case remote(RemoteCacheEvent)
    case phase(BuildPhase)
    /// The packed form (`.tar.zst`) holds `files` of the store's `totalFiles` files so far, `bytes`
    /// of their `totalBytes` bytes.
    case packed(files: Int, totalFiles: Int, bytes: Int64, totalBytes: Int64)
}
