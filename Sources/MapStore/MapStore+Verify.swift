import Foundation
import MapFormat
import MapIO

extension MapStore {
    /// True when the folder `folder` (a file URL) looks like a MapStore storage folder (it has a state database).
    public static func isStorage(_ folder: URL) -> Bool {
        FileSystem.exists(folder.storeFolderPath + "/" + StoreLayout.stateFileName)
    }

    /// Checks the installed storage folder `storage` (a file URL) without changing it (no repair, no cleanup): the
    /// committed state, the kept manifest, and every installed file (with SHA-256 when `full`).
    /// A pending operation is reported as a problem: such a store needs `repair()` first. With
    /// `trustedPublicKeys` and `full`, the kept manifest's signature must verify with one of them.
    public static func verifyInstalled(storage: URL, full: Bool, trustedPublicKeys: [String] = []) throws(MapStoreError) -> (
        mapVersion: MapVersion, imageID: String, problems: [StoreProblem]
    ) {
        try MapStoreError.boundary("verifyInstalled", path: storage.storeFolderPath) {
            let core = StoreCore(storage: storage.storeFolderPath, cache: storage.storeFolderPath + "/.no-cache", image: nil, fullValidation: full)
            core.trustedKeys = trustedPublicKeys.enumerated().map { TrustedKey(path: "trusted key \($0.offset + 1)", text: $0.element) }
            let state = try StateDatabase(path: core.layout.state)
            core.state = state
            guard let imageID = try state.imageID else { throw MapStoreError.notInstalled }
            let kept = try core.keptManifest()
            let manifest = kept.manifest
            let problems = try core.keptManifestProblems(kept, signature: full) + core.verify(full: full, manifest: manifest)
            var reported = try core.regionStateProblems() + problems
            if let pending = try state.pending() {
                reported.insert(
                    StoreProblem(
                        kind: .pendingOperation, path: StoreLayout.stateFileName, regions: [],
                        detail: "operation '\(pending)' did not finish; open the store and call repair() (mappack store repair)"), at: 0)
            }
            return (manifest.mapVersion, imageID, reported)
        }
    }
}
