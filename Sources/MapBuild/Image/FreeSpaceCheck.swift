import Foundation
import MapFormat
import MapIO

/// Whether the output folder's and the download cache's filesystems hold what a plan will write,
/// checked before a build starts, so a full disk is said up front rather than as a failed bundle.
enum FreeSpaceCheck {
    /// Test hook: `MAPPACK_TEST_FREE_BYTES` stands for every filesystem's free bytes (CI and users
    /// never set it; a test cannot fill a real disk).
    private static let pretended: Int64? = ProcessInfo.processInfo.environment["MAPPACK_TEST_FREE_BYTES"].flatMap { Int64($0) }

    /// Bytes free on the filesystem holding `path` (or its nearest existing parent); nil when unknown.
    static func free(at path: String) -> Int64? {
        if let pretended { return pretended }
        return try? FileSystem.freeBytes(at: nearestExisting(path))
    }

    /// `path`, or its nearest parent that exists (the output folder may not exist yet).
    private static func nearestExisting(_ path: String) -> String {
        var folder = path
        while !FileSystem.exists(folder), folder != "/", !folder.isEmpty { folder = FileSystem.parent(folder) }
        return folder
    }

    private static func device(_ path: String) -> UInt64? { (try? FileSystem.status(nearestExisting(path)))??.device }

    /// Throws `BuildError.notEnoughSpace` when `plan` does not fit: the image (store, cache seed)
    /// and its packed form in `outputRoot`, the bundles still to download in `cacheRoot`.
    static func check(_ plan: BuildPlan, outputRoot: String, cacheRoot: String) throws(BuildError) {
        let store = plan.sizeOnDisk ?? plan.bundles.filter(\.forStore).reduce(0) { $0 + $1.info.unpackedSize }
        // The packed form is about the bundles' compressed size; tile outputs are not known before.
        let packed = plan.recipe.formats.contains(.tarZst) ? plan.storeBundleBytes : 0
        let output = store + plan.cacheSeedBytes + packed
        let outputFree = free(at: outputRoot)
        let cacheFree = free(at: cacheRoot)
        let sameFilesystem = device(outputRoot) == device(cacheRoot) || pretended != nil
        if sameFilesystem, let outputFree, output + plan.downloadBytes > outputFree {
            throw .notEnoughSpace(folder: outputRoot, needed: output + plan.downloadBytes, free: outputFree)
        }
        if let outputFree, output > outputFree { throw .notEnoughSpace(folder: outputRoot, needed: output, free: outputFree) }
        if let cacheFree, plan.downloadBytes > cacheFree {
            throw .notEnoughSpace(folder: cacheRoot, needed: plan.downloadBytes, free: cacheFree)
        }
    }
}
