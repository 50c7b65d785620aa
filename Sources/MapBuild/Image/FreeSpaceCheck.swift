import Foundation
import MapFormat
import MapIO

/// Whether the output folder's and the download cache's filesystems hold what a plan will write,
/// checked before a build starts, so a full disk is said up front rather than as a failed bundle.
enum FreeSpaceCheck {
    /// Test hook, in test builds only (`MAPPACK_TEST_HOOKS`; `make release-hooks-check` finds it in a
    /// release binary): `MAPPACK_TEST_FREE_BYTES` stands for every filesystem's free bytes (a test cannot
    /// fill a real disk).
    private static let pretended: Int64? = {
        #if MAPPACK_TEST_HOOKS
            return ProcessInfo.processInfo.environment["MAPPACK_TEST_FREE_BYTES"].flatMap { Int64($0) }
        #else
            return nil
        #endif
    }()

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

    /// What a build of `plan` writes into its output folder at most, staging included: the store; the
    /// seed-only bundles unpacked in the staging folder, the seed's work database and the seed (each
    /// entry with SQLite's page overhead); the packed image (about the store bundles' compressed size);
    /// and each tile output, which holds at most every tile of the store and of the seed once.
    static func outputBound(_ plan: BuildPlan) -> Int64 {
        let blockSize = plan.recipe.blockSize
        let storeUnpacked = plan.bundles.filter(\.forStore).reduce(Int64(0)) { $0 + $1.info.unpackedSize }
        let store = max(plan.sizeOnDisk ?? 0, storeUnpacked)
        let seedOnly = plan.bundles.filter { !$0.forStore }
        let seedScratch = seedOnly.reduce(Int64(0)) { $0 + $1.info.unpackedSize + Int64($1.info.files ?? 1) * blockSize }
        let seedFiles = seedOnly.reduce(Int64(0)) { $0 + Int64($1.info.files ?? 1) }
        let seed = plan.cacheSeedBytes == 0 ? 0 : 2 * (plan.cacheSeedBytes + seedFiles * 512 + (64 << 10))
        let packed = plan.recipe.formats.contains(.tarZst) ? plan.storeBundleBytes + (64 << 10) : 0
        let tileOutputs = Int64(plan.recipe.formats.filter { $0 != .directory && $0 != .tarZst }.count) * (storeUnpacked + plan.cacheSeedBytes)
        return store + seedScratch + seed + packed + tileOutputs
    }

    /// What the bundles still to download take in the download cache at most, on a filesystem that
    /// gives space out in units of `unit` bytes: each bundle's file in whole units (a 5 KiB bundle
    /// takes 8 KiB of 4 KiB blocks), and a unit more for the folder it may need (`sha256/xx/`).
    static func cacheBound(_ plan: BuildPlan, unit: Int64) -> Int64 {
        let unit = max(1, unit)
        return plan.bundles.filter { !$0.cached }.reduce(Int64(0)) { $0 + ($1.info.size + unit - 1) / unit * unit + unit }
    }

    /// Throws `BuildError.notEnoughSpace` when `plan` does not fit: what the build writes into
    /// `outputRoot` at most (`outputBound`), the bundles still to download in `cacheRoot` (`cacheBound`).
    static func check(_ plan: BuildPlan, outputRoot: String, cacheRoot: String) throws(BuildError) {
        let output = outputBound(plan)
        let outputFree = free(at: outputRoot)
        let cacheFree = free(at: cacheRoot)
        let download = cacheBound(plan, unit: (try? FileSystem.allocationUnit(at: nearestExisting(cacheRoot))) ?? 4096)
        let sameFilesystem = device(outputRoot) == device(cacheRoot) || pretended != nil
        if sameFilesystem, let outputFree, output + download > outputFree {
            throw .notEnoughSpace(folder: outputRoot, needed: output + download, free: outputFree)
        }
        if let outputFree, output > outputFree { throw .notEnoughSpace(folder: outputRoot, needed: output, free: outputFree) }
        if let cacheFree, download > cacheFree {
            throw .notEnoughSpace(folder: cacheRoot, needed: download, free: cacheFree)
        }
    }
}
