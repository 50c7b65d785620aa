import Foundation
import MapFormat
import MapIO

/// Installed regions: listing, deletion, file paths for readers.
extension StoreCore {
    /// `installedSnapshot` once, when an install just made it and nothing was written since; `snapshot()` otherwise.
    func takeSnapshot() -> StoreSnapshot {
        defer { installedSnapshot = nil }
        if let (made, changes) = installedSnapshot, state?.db.totalChanges == changes { return made }
        return snapshot()
    }

    /// What readers see now (see `StoreSnapshot`), from the state database alone (a few rows, no
    /// manifest); empty when the state cannot be read.
    func snapshot() -> StoreSnapshot {
        guard let state, let version = try? state.mapVersion, let imageID = try? state.imageID else {
            return .empty(root: layout.root)
        }
        let rows = (try? state.regions(bundles: false)) ?? []
        let language = (try? state.meta(.language)) ?? nil
        var snapshot = StoreSnapshot(
            root: layout.root, storeFolder: layout.store, mapVersion: version, imageID: imageID, language: language, regions: rows)
        let pending = (try? state.pending()) ?? nil
        snapshot.pending = pending != nil
        snapshot.baseStoreFolder = baseStore
        // A switch under way or killed midway: the committed version's files are in its kept tree.
        if case .transition? = pending, let tree = committedTreeDuringSwitch { snapshot.storeFolder = tree }
        snapshot.downloadStates = (try? state.downloadStates()) ?? [:]
        snapshot.catalogURL = catalogURL
        snapshot.catalogToCheck = catalogToCheck
        snapshot.blockSize = ((try? state.meta(.blockSize)) ?? nil).flatMap { Int64($0) }
        snapshot.catalogName = (try? state.meta(.catalogName)) ?? nil
        snapshot.supportedUntil = ((try? state.meta(.supportedUntil)) ?? nil).flatMap { $0.isEmpty ? nil : $0 }
        snapshot.addedCatalogs = (try? state.addedCatalogs()) ?? []
        for row in snapshot.addedCatalogs { snapshot.addedTrees[row.id] = keptTree(of: Self.storeCatalog(row)) }
        snapshot.regionCatalogs = (try? state.regionCatalogs()) ?? [:]
        return snapshot
    }

    /// `ids` and every installed region below them.
    func withDescendants(_ ids: [RegionID], in installed: [StoredRegion]) -> [RegionID] {
        var parents: [RegionID: RegionID] = [:]
        for region in installed { if let parent = region.parent { parents[region.id] = parent } }
        let roots = Set(ids)
        return installed.map(\.id).filter { id in
            var current: RegionID? = id
            while let next = current {
                if roots.contains(next) { return true }
                current = parents[next]
            }
            return false
        }
    }

    /// Deletes `ids` (and their installed descendants): mark pending, remove files no kept region uses, commit.
    func deleteRegions(_ ids: [RegionID]) throws {
        let state = try committedState()
        let installed = try state.regions()
        for id in ids where !installed.contains(where: { $0.id == id }) { throw MapStoreError.unknownRegion(id) }
        let doomed = withDescendants(ids, in: installed)
        guard !doomed.isEmpty else { return }
        try state.markPending(.delete(doomed))
        CrashPoint.reach("delete.afterMark")
        // Recorded, the delete only rolls forward (repair finishes it): readers stop seeing the regions
        // before their files go.
        var remaining = snapshot()
        let gone = Set(doomed)
        remaining.regions.removeAll { gone.contains($0.id) }
        remaining.pending = false
        publishForReaders(remaining)
        try removeFiles(of: doomed, installed: installed)
        CrashPoint.reach("delete.beforeCommit")
        try state.commitDelete(doomed)
    }

    /// Removes the files of `doomed` regions' bundles that no other installed region holds; idempotent.
    func removeFiles(of doomed: [RegionID], installed: [StoredRegion]) throws {
        let doomedSet = Set(doomed)
        let kept = Set(installed.filter { !doomedSet.contains($0.id) }.flatMap(\.bundles))
        let bundles = Set(installed.filter { doomedSet.contains($0.id) }.flatMap(\.bundles)).subtracting(kept)
        let files = try storedManifest().files.filter { bundles.contains($0.bundle) }
        // In place, the base's files cannot be freed: they are hidden.
        if base != nil { return try removeOrHide(files) }
        for (index, file) in files.enumerated() {
            let path = layout.storePath(file.path)
            try FileSystem.removeTree(path)
            if index == 0 { CrashPoint.reach("delete.midFiles") }
        }
        for file in files { FileSteps.pruneEmptyFolders(above: layout.storePath(file.path), root: layout.store) }
        try FileSystem.syncDirectory(layout.store)
    }
}
