import Foundation
import MapFormat
import MapIO
import MapVerify

/// The check of an installed store, split so that its long part (reading, with `full` hashing, every
/// installed file) runs without the store's lock: what to compare with is read under the lock, the
/// files are read outside it, and the lock is taken again to see whether a write changed the store
/// meanwhile (then the files are read again).
extension StoreCore {
    /// What identifies the installed file set: when it is the same before and after a check of the
    /// files, no write replaced, removed or added installed files while they were read (a repair that
    /// restored files keeps it, and so does a write that changed only region states).
    struct CheckFingerprint: Equatable {
        var root: String
        var imageID: String?
        var regions: [RegionID]
        var bundles: [[BundleDigest]]
        var pending: PendingOperation?
    }

    /// What a check of the files compares with, read under the store's lock.
    struct CheckBasis {
        /// The storage folder (names the check's test hooks).
        var root: String
        /// The installed store tree.
        var store: String
        var fingerprint: CheckFingerprint
        /// The kept manifest's own problems and its disagreements with the state (and, with `full` and
        /// trusted keys, with its signature).
        var manifestProblems: [StoreProblem]
        /// The kept manifest narrowed to the installed regions: the files to check.
        var installed: ImageManifest
        /// An in-place store's base store tree and its files by path (`StoreCore+InPlace.swift`).
        var base: String? = nil
        var baseFiles: [String: ImageFile] = [:]
    }

    /// The store's fingerprint now.
    func checkFingerprint() throws -> CheckFingerprint {
        let rows = try state?.regions() ?? []
        return CheckFingerprint(
            root: layout.root, imageID: try state?.imageID, regions: rows.map(\.id), bundles: rows.map(\.bundles), pending: try state?.pending())
    }

    /// Reads what `checkFiles` compares with; throws `notInstalled` when nothing is installed.
    func checkBasis(full: Bool) throws -> CheckBasis {
        guard let state, try state.imageID != nil else { throw MapStoreError.notInstalled }
        let kept = try keptManifest()
        return CheckBasis(
            root: layout.root, store: layout.store, fingerprint: try checkFingerprint(),
            manifestProblems: try keptManifestProblems(kept, signature: full), installed: try installedManifest(kept.manifest),
            base: baseStore, baseFiles: try baseFiles(kept: kept.manifest))
    }

    /// Compares the installed files with `basis` (presence, sizes, no extra files; with `full`, SHA-256),
    /// on several threads. Needs no lock. Stops between files once `cancellation` is raised and throws
    /// `MapStoreError.cancelled`.
    static func checkFiles(_ basis: CheckBasis, full: Bool, cancellation: CancellationFlag?) throws(MapStoreError) -> [StoreProblem] {
        CrashPoint.reach("verify.beforeFiles", storage: basis.root)
        try cancellation?.check()
        let problems =
            if let base = basis.base {
                checkInPlace(
                    store: basis.store, base: base, baseFiles: basis.baseFiles, installed: basis.installed, full: full,
                    stop: { cancellation?.isCancelled ?? false })
            } else {
                ImageVerifier.verifyTree(
                    basis.store, manifest: basis.installed, hashContents: full, jobs: ProcessInfo.processInfo.activeProcessorCount,
                    stop: { cancellation?.isCancelled ?? false }
                ).problems
            }
        // A stopped check's result is partial: it is not reported.
        try cancellation?.check()
        return problems.map(StoreProblem.init)
    }
}
