import Foundation
import MapFetch
import MapFormat
import MapIO

/// Why a build failed.
package enum BuildError: Error, Sendable, CustomStringConvertible {
    case plan(PlanError)
    case fetch(FetchError)
    case bundleRejected(bundle: BundleDigest, regions: [RegionID], reason: ArchiveError)
    case pathInTwoBundles(path: String, bundles: [BundleDigest])
    /// A bundle in the download cache no longer matches its digest (damaged after it was verified); it was removed.
    case damagedInCache(bundle: BundleDigest, path: String, reason: ArchiveError)
    case output(String)
    /// A tile database of a bundle (`path` in the store) that the tile outputs do not read: its
    /// `tiles` is not a plain table, or reading it did not end within its work limit.
    case tileDatabaseRefused(path: String, region: RegionID, bundle: BundleDigest?, reason: String)
    /// An offline build needs a bundle that is neither in the download cache nor at a `file://` URL.
    case offline(bundle: BundleDigest, url: URL)
    /// The filesystem of `folder` has `free` bytes; the build needs `needed` (checked before it starts).
    case notEnoughSpace(folder: String, needed: Int64, free: Int64)
    /// Writing `path` failed for want of space (`ENOSPC`, `EDQUOT`) while the build ran.
    case diskFull(path: String, bundle: BundleDigest?)

    /// `error` as `diskFull` when it is a write that failed for want of space: a file's `ENOSPC` or
    /// `EDQUOT` (a bundle's download into the cache among them), or SQLite's `SQLITE_FULL` (the cache
    /// seed's and the tile outputs' databases).
    static func diskFull(from error: any Error) -> BuildError? {
        if let file = FileError.outOfSpace(in: error) { return .diskFull(path: file.path, bundle: nil) }
        // A download that found the download cache full.
        if let fetch = error as? FetchError, case .local(let file) = fetch.reason, file.isOutOfSpace {
            return .diskFull(path: file.path, bundle: fetch.bundle)
        }
        return nil
    }
    /// The tile databases an `mbtiles`, `maplibre-offline` or `pmtiles` output joins hold tiles of more than one format.
    case mixedTileFormats([TileFormatUse])
    /// The catalog's `released`, which becomes the manifest's `built` when `SOURCE_DATE_EPOCH` is
    /// unset, is not a time (`UTCTime.parseISO8601`), or not one from 1970 to 9999.
    case releasedNotATime(catalog: String, released: String)

    /// One tile database's format, for `mixedTileFormats`.
    package struct TileFormatUse: Sendable, Equatable {
        package let region: RegionID
        package let file: String
        package let format: String
    }

    package var description: String {
        switch self {
        case .plan(let error): error.description
        case .fetch(let error): error.description
        case .bundleRejected(let bundle, let regions, let reason):
            "bundle \(bundle) (regions \(regions.map(\.rawValue).joined(separator: ", "))) rejected: \(reason)"
        case .pathInTwoBundles(let path, let bundles):
            "store path '\(path)' is written by bundles \(bundles.map(\.description).joined(separator: " and ")); the catalog is invalid (a path belongs to one bundle)"
        case .damagedInCache(let bundle, let path, let reason):
            "bundle \(bundle) in the download cache (\(path)) is damaged: \(reason). It was removed from the cache; run the build again to download it anew"
        case .output(let message): message
        case .tileDatabaseRefused(let path, let region, let bundle, let reason):
            "tile database '\(path)' of region \(region)\(bundle.map { " (bundle \($0))" } ?? "") refused: \(reason). The mbtiles and maplibre-offline outputs "
                + "copy tiles only from plain tables; ask the catalog's publisher to fix the bundle, or drop those formats from output.formats"
        case .notEnoughSpace(let folder, let needed, let free):
            "not enough free space for this build in \(folder): it needs about \(ByteCount.format(needed)) (\(needed) bytes), "
                + "\(ByteCount.format(free)) are free; free \(ByteCount.format(needed - free)), or choose another --out or --cache folder"
        case .diskFull(let path, let bundle):
            "disk full: no space left writing \(path)\(bundle.map { " (bundle \($0))" } ?? ""); free space on that filesystem, "
                + "or choose another --out or --cache folder, then build again"
        case .offline(let bundle, let url):
            "bundle \(bundle) is not in the download cache and \(url.absoluteString) is not a local file; an offline build does not use the network (fill the cache with an online build first)"
        case .mixedTileFormats(let uses):
            "the tile databases hold tiles of different formats ("
                + uses.map { "region '\($0.region)' \($0.file): \($0.format)" }.joined(separator: "; ")
                + "); one .mbtiles, MapLibre database or .pmtiles holds one format, so build these regions into separate images (or leave out the mbtiles, maplibre-offline and pmtiles outputs)"
        case .releasedNotATime(let catalog, let released):
            "\(catalog): the catalog's \"released\" is '\(released)', not a time from 1970 to 9999; the image's build time is made from it, "
                + "so ask its publisher for one like 2026-11-20T00:00:00Z, or set SOURCE_DATE_EPOCH to give the build time yourself"
        }
    }
}
