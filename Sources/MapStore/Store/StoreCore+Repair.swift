import Foundation
import MapFormat
import MapIO

/// Finishing or rolling back interrupted work, and restoring files from the image.
extension StoreCore {
    func repair(linkFiles: Bool) throws -> RepairReport {
        var actions: [RepairReport.Action] = []
        removeLeftovers()
        if state == nil, FileSystem.exists(layout.state) { state = try StateDatabase(path: layout.state) }
        let pending = try state?.pending()
        let committed = try state?.imageID != nil
        var reinstall = !committed
        if case .install = pending { reinstall = true }
        if !reinstall, pending == nil, let offered = try? offeredFolderManifest(), let installed = try state?.mapVersion, offered.mapVersion > installed {
            reinstall = true
        }
        var inTransition = false
        if case .transition? = pending { inTransition = true }
        if !reinstall, !inTransition, (try? storedManifest())?.imageID != (try state?.imageID) { reinstall = true }
        if reinstall {
            let hadAnything = FileSystem.exists(layout.state) || FileSystem.exists(layout.store) || FileSystem.exists(layout.manifest)
            try wipe()
            if let image {
                try install(image, linkFiles: linkFiles)
                return RepairReport(actions: [.reinstalled], storage: layout.root, status: .ok)
            }
            return RepairReport(actions: hadAnything ? [.rolledBackInstall] : [], storage: layout.root, status: .empty)
        }
        guard let state else { throw MapStoreError.notInstalled }
        switch pending {
        case .delete(let ids)?:
            let installed = try state.regions()
            let remaining = ids.filter { id in installed.contains { $0.id == id } }
            try removeFiles(of: remaining, installed: installed)
            try state.commitDelete(remaining)
            actions.append(.finishedDelete)
        case .cacheImport?:
            if image != nil, let version = try state.mapVersion {
                let folder = try imageFolder(scratch: layout.staging)
                let seed = folder + "/" + ImageManifest.cacheSeedFileName
                if FileSystem.exists(seed) { try importPendingSeed(seed, storeVersion: version) }
            }
            try state.clearPending()
            actions.append(.finishedCacheImport)
        case .move(let destination)?:
            actions.append(try finishOrRollBackMove(to: destination))
        case .transition(let record)?:
            actions.append(try finishOrRollBackTransition(record))
        case .install?, nil:
            break
        }
        guard FileSystem.exists(layout.state) else {
            return RepairReport(actions: actions, storage: layout.root, status: .ok)
        }
        let restored = try restoreFiles()
        if restored > 0 { actions.append(.restoredFiles(count: restored)) }
        try FileSystem.removeTree(layout.staging)
        return RepairReport(actions: actions, storage: layout.root, status: .ok)
    }

    /// Full verification; every missing, corrupt or extra file is restored from the image or removed.
    /// Returns the number of files restored or removed.
    private func restoreFiles() throws -> Int {
        let manifest = try storedManifest()
        if !FileSystem.isDirectory(layout.store) {
            try FileSystem.removeTree(layout.store)
            try FileSystem.makeDirectories(layout.store)
        }
        let problems = try verify(full: true, manifest: manifest)
        guard !problems.isEmpty else { return 0 }
        let needsImage = problems.contains { $0.kind != "extra" }
        var source = ""
        if needsImage {
            source = try imageFolder(scratch: layout.staging)
            let offered = try ImageVerifier.readManifest(try ReadableFile.contents(of: source + "/" + ImageManifest.fileName, limit: ImageVerifier.maxManifestBytes),
                                                         file: source + "/" + ImageManifest.fileName).0
            guard offered.imageID == manifest.imageID else {
                throw MapStoreError.imageNeededForRepair(reason: "the offered image \(offered.imageID.prefix(16)) is not the installed one \(manifest.imageID.prefix(16))")
            }
        }
        for problem in problems {
            guard let target = layout.storePath(problem.path) else { continue }
            if problem.kind == "extra" {
                try FileSystem.removeTree(target)
                FileSteps.pruneEmptyFolders(above: target, root: layout.store)
            } else {
                try FileSteps.replaceFile(target, from: source + "/" + ImageManifest.storeFolder + "/" + problem.path)
            }
        }
        try FileSteps.syncFolders(layout.store)
        let left = try verify(full: true, manifest: manifest)
        if !left.isEmpty { throw MapStoreError.repairFailed(problems: left) }
        return problems.count
    }
}
