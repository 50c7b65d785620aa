import MapFetch
import MapFormat

/// What a build reports while it works.
package enum BuildEvent: Sendable {
    case planned(bundles: Int, downloadBytes: Int64)
    case fetch(FetchEvent)
    case unpacked(BundleDigest, files: Int)
    case reused(BundleDigest, files: Int)
    case remote(RemoteCacheEvent)
    case phase(String)
}
