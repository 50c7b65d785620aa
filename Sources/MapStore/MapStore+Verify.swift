import Foundation
import MapFormat
import MapIO

extension MapStore {
    /// True when `path` looks like a MapStore storage folder (it has a state database).
    public static func isStorage(_ path: String) -> Bool {
        FileSystem.exists(path + "/" + StoreLayout.stateFileName)
    }

    /// Checks an installed storage folder without changing it (no repair, no cleanup): the
    /// committed state, the kept manifest, and every installed file (with SHA-256 when `full`).
    /// A pending operation is reported as a problem: such a store needs `repair()` first.
    public static func verifyInstalled(storage: String, full: Bool) throws -> (mapVersion: MapVersion, imageID: String, problems: [StoreProblem]) {
        let core = StoreCore(storage: storage, cache: storage + "/.no-cache", image: nil, fullValidation: full)
        let state = try StateDatabase(path: core.layout.state)
        core.state = state
        guard let imageID = try state.imageID else { throw MapStoreError.notInstalled }
        let manifest = try core.storedManifest()
        var problems = try core.verify(full: full, manifest: manifest)
        if manifest.imageID != imageID {
            problems.insert(StoreProblem(kind: "imageIDMismatch", path: ImageManifest.fileName, regions: [],
                                         detail: "kept manifest is image \(manifest.imageID) but the state records \(imageID)"), at: 0)
        }
        if let pending = try state.pending() {
            problems.insert(StoreProblem(kind: "pendingOperation", path: StoreLayout.stateFileName, regions: [],
                                         detail: "operation '\(pending)' did not finish; open the store and call repair() (mappack store repair)"), at: 0)
        }
        return (manifest.mapVersion, imageID, problems)
    }
}
