import Foundation
import MapFormat
import MapIO
import Synchronization

/// Checking an installed store against its kept manifest: the open store's `verify(full:)`, and
/// `verifyInstalled` for a storage folder no store has open.
extension MapStore {
    /// Checks the kept manifest (its image id against its content and the state's record; with
    /// `full` and trusted keys, its kept signature) and the installed files against it, narrowed to
    /// installed regions: presence, sizes, no extra files, and with `full` their SHA-256.
    ///
    /// A full check reads every installed byte, so it runs on threads of its own (never on the
    /// cooperative pool) and without the store's lock: readers, downloads, updates and other calls go
    /// on meanwhile. When a write replaced, added or removed installed files during the check (an
    /// update, a download, a deletion, a move), the files are checked again, so the problems are those
    /// of one committed state; after three such rounds the last check holds the lock.
    ///
    /// Cancelling the calling task stops the check between files and throws `MapStoreError.cancelled`.
    public func verify(full: Bool) async throws(MapStoreError) -> [StoreProblem] {
        try await MapStoreError.boundary("verify", path: storageFolder) {
            try await CancellationFlag.runBlocking { [self] flag in try checkInstalled(full: full, cancellation: flag) }
        }
    }

    /// Rounds of `verify` that check the files without the store's lock before one holds it.
    static let unlockedCheckRounds = 3

    /// The body of `verify`, on a blocking thread.
    private func checkInstalled(full: Bool, cancellation: CancellationFlag) throws -> [StoreProblem] {
        for _ in 0..<MapStore.unlockedCheckRounds {
            let basis = try core.withLock { core throws -> StoreCore.CheckBasis in try core.checkBasis(full: full) }
            let files = try StoreCore.checkFiles(basis, full: full, cancellation: cancellation)
            let now = try core.withLock { core throws -> StoreCore.CheckFingerprint in try core.checkFingerprint() }
            if now == basis.fingerprint { return basis.manifestProblems + files }
        }
        // Writes kept changing the installed files: this round holds the lock, so none can.
        return try core.withLock { core throws -> [StoreProblem] in
            let basis = try core.checkBasis(full: full)
            return basis.manifestProblems + (try StoreCore.checkFiles(basis, full: full, cancellation: cancellation))
        }
    }

    /// True when the folder `folder` (a file URL) looks like a MapStore storage folder (it has a state database).
    public static func isStorage(_ folder: URL) -> Bool {
        FileSystem.exists(folder.storeFolderPath + "/" + StoreLayout.stateFileName)
    }

    /// Checks the installed storage folder `storage` (a file URL) without changing it (no repair, no cleanup): the
    /// committed state, the kept manifest, and every installed file (with SHA-256 when `full`).
    /// A pending operation is reported as a problem: such a store needs `repair()` first. With
    /// `trustedPublicKeys` and `full`, the kept manifest's signature must verify with one of them.
    ///
    /// Runs on threads of its own (a full check reads every installed byte). Cancelling the calling
    /// task stops the check between files and throws `MapStoreError.cancelled`. Do not point it at a
    /// storage folder a `MapStore` in this process has open and is writing to: use that store's `verify(full:)`.
    public static func verifyInstalled(storage: URL, full: Bool, trustedPublicKeys: [String] = []) async throws(MapStoreError) -> (
        mapVersion: MapVersion, imageID: String, problems: [StoreProblem]
    ) {
        let folder = storage.storeFolderPath
        return try await MapStoreError.boundary("verifyInstalled", path: folder) {
            try await CancellationFlag.runBlocking { flag in
                try verifyInstalledBlocking(storage: folder, full: full, trustedPublicKeys: trustedPublicKeys, cancellation: flag)
            }
        }
    }

    /// The body of `verifyInstalled`, on a blocking thread.
    private static func verifyInstalledBlocking(storage: String, full: Bool, trustedPublicKeys: [String], cancellation: CancellationFlag) throws -> (
        mapVersion: MapVersion, imageID: String, problems: [StoreProblem]
    ) {
        let core = StoreCore(storage: storage, cache: storage + "/.no-cache", image: nil, fullValidation: full)
        core.trustedKeys = trustedPublicKeys.enumerated().map { TrustedKey(path: "trusted key \($0.offset + 1)", text: $0.element) }
        let state = try StateDatabase(path: core.layout.state)
        core.state = state
        guard let imageID = try state.imageID else { throw MapStoreError.notInstalled }
        let basis = try core.checkBasis(full: full)
        let files = try StoreCore.checkFiles(basis, full: full, cancellation: cancellation)
        var reported = try core.regionStateProblems() + basis.manifestProblems + files
        if let pending = try state.pending() {
            reported.insert(
                StoreProblem(
                    kind: .pendingOperation, path: StoreLayout.stateFileName, regions: [],
                    detail: "operation '\(pending)' did not finish; open the store and call repair() (mappack store repair)"), at: 0)
        }
        return (basis.installed.mapVersion, imageID, reported)
    }
}
