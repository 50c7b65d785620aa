import Foundation
import MapFormat
import MapIO
import MapVerify

/// Moving the persistent storage to another folder, atomically from the app's point of view:
/// the destination's `state.sqlite` appearing (one rename) is the commit.
extension StoreCore {
    func moveData(to newRoot: String, progress: (Double) -> Void) throws {
        let state = try committedState()
        let destination = StoreLayout(root: FileSystem.absolute(newRoot))
        guard destination.root != layout.root else { return }
        if FileSystem.exists(destination.root) {
            let present = try DirectoryWalker.entries(of: destination.root).filter {
                !$0.hasPrefix(StoreLayout.stagingPrefix) && $0 != StoreLayout.lockFileName
            }
            if !present.isEmpty { throw MapStoreError.destinationNotEmpty(path: destination.root) }
        }
        try checkCancelled()
        let created = !FileSystem.exists(destination.root)
        try state.markPending(.move(to: destination.root))
        CrashPoint.reach("move.afterMark")
        do {
            try copyForMove(to: destination, progress: progress)
        } catch MapStoreError.cancelled {
            // Before the commit nothing at the destination is in use: take it away and stay here.
            _ = try finishOrRollBackMove(to: destination.root)
            if created { FileSystem.removeEmptyFolder(destination.root) }
            throw MapStoreError.cancelled
        }
        CrashPoint.reach("move.beforeCommit")
        try commitMove(to: destination)
        progress(1)
    }

    /// A move's copy: the store tree, the download cache, the kept catalog and manifest into the
    /// destination's staging folder, then renamed into place beside no state database yet. Checks
    /// for cancellation between files; the caller rolls back on it.
    private func copyForMove(to destination: StoreLayout, progress: (Double) -> Void) throws {
        let staging = destination.staging
        try FileSystem.makeDirectoriesDurably(destination.root)
        try FileSystem.removeTree(staging)
        try FileSystem.makeDirectories(staging + "/" + ImageManifest.storeFolder)
        let files = try DirectoryWalker.walk(layout.store).filter(\.isRegular).map { (path: $0.relativePath, size: $0.size) }
        // The download cache (fetched and partial bundles of paused downloads) and the kept catalog go along;
        // lock files are per process and made again on use.
        let downloads =
            FileSystem.isDirectory(downloadFolder)
            ? try DirectoryWalker.walk(downloadFolder).filter { $0.isRegular && !$0.relativePath.hasSuffix(".lock") }.map {
                (path: $0.relativePath, size: $0.size)
            }
            : []
        let total = max(1, (files + downloads).reduce(Int64(0)) { $0 + $1.size })
        try FileSteps.copyFiles(files, from: layout.store, to: staging + "/" + ImageManifest.storeFolder, link: false) { bytes, index in
            progress(Double(bytes) / Double(total) * 0.95)
            if index == 0 { CrashPoint.reach("move.midCopy", storage: layout.root) }
            try checkCancelled()
        }
        let copied = files.reduce(Int64(0)) { $0 + $1.size }
        if !downloads.isEmpty {
            try FileSystem.makeDirectories(staging + "/" + StoreLayout.downloadsFolderName)
            try FileSteps.copyFiles(downloads, from: downloadFolder, to: staging + "/" + StoreLayout.downloadsFolderName, link: false) { bytes, _ in
                progress(Double(copied + bytes) / Double(total) * 0.95)
                try checkCancelled()
            }
        }
        let keepsCatalog = FileSystem.exists(keptCatalogPath)
        if keepsCatalog { try FileSystem.copyFile(keptCatalogPath, to: staging + "/" + StoreLayout.catalogFileName) }
        // In place: the hiding markers go along; the base's manifest stays in the base until the store writes its own.
        if base != nil { try copyHiddenMarkers(try DirectoryWalker.walk(layout.store), to: staging + "/" + ImageManifest.storeFolder) }
        let ownManifest = FileSystem.exists(layout.manifest)
        if ownManifest { try FileSystem.copyFile(layout.manifest, to: staging + "/" + ImageManifest.fileName) }
        let signed = FileSystem.exists(layout.signature)
        if signed { try FileSystem.copyFile(layout.signature, to: staging + "/" + ImageManifest.signatureFileName) }
        try FileSystem.syncTree(staging)
        CrashPoint.reach("move.afterCopy")
        try checkCancelled()
        // Each renamed into place beside no state database yet; the folder synced once after.
        var names = [ImageManifest.storeFolder]
        if !downloads.isEmpty { names.append(StoreLayout.downloadsFolderName) }
        if keepsCatalog { names.append(StoreLayout.catalogFileName) }
        if signed { names.append(ImageManifest.signatureFileName) }
        if ownManifest { names.append(ImageManifest.fileName) }
        for name in names { try destination.stagingArea.commit(name, as: name, sync: false) }
        try FileSystem.syncDirectory(destination.root)
    }

    /// A move's commit (the destination's state database appearing), then the old copy's removal.
    private func commitMove(to destination: StoreLayout) throws {
        let staging = destination.staging
        let stagedState = staging + "/" + StoreLayout.stateFileName
        try FileSystem.copyFile(layout.state, to: stagedState)
        do {
            let copy = try StateDatabase(path: stagedState)
            try copy.clearPending()
        }
        try FileSystem.syncFile(stagedState)
        try destination.stagingArea.commit(StoreLayout.stateFileName, as: StoreLayout.stateFileName)
        try FileSystem.removeTree(staging)
        CrashPoint.reach("move.afterCommit")
        let old = layout
        layout = destination
        self.state = try StateDatabase(path: destination.state)
        // Readers go to the destination before the old copy goes.
        publishForReaders(snapshot())
        try removeCopy(at: old)
    }

    /// Removes a storage's installed data: the store first, the state database last, so an
    /// interruption leaves a state whose pending move the next repair finishes.
    private func removeCopy(at old: StoreLayout) throws {
        if old.root == layout.root { state = nil }
        try FileSystem.removeTree(old.store)
        CrashPoint.reach("move.midRemoveOld")
        try FileSystem.removeTree(old.root + "/" + StoreLayout.downloadsFolderName)
        // The fetched catalogs and their validators are a cache: the moved store fetches again
        // (conditionally) rather than carry them, and the old folder is left empty.
        try FileSystem.removeTree(old.root + "/" + StoreLayout.catalogFetchFolderName)
        try FileSystem.removeFile(old.root + "/" + StoreLayout.catalogFileName)
        try FileSystem.removeFile(old.manifest)
        try FileSystem.removeFile(old.signature)
        try FileSystem.removeFile(old.state)
        try FileSystem.removeFile(old.state + "-journal")
        try FileSystem.syncDirectory(old.root)
    }

    /// After a killed move: finish it when the destination committed, else remove the destination's partial copy.
    func finishOrRollBackMove(to root: String) throws -> RepairReport.Action {
        let destination = StoreLayout(root: root)
        let imageID = try state?.imageID
        if FileSystem.exists(destination.state), let other = try? StateDatabase(path: destination.state),
            (try? other.imageID) == imageID, (try? other.pending()) == nil
        {
            try removeCopy(at: layout)
            layout = destination
            state = other
            return .finishedMove(to: destination.rootURL)
        }
        // The destination comes from the state database: only what a move of this store writes into
        // an empty folder is removed, and only when the folder holds nothing else.
        let entries = (try? DirectoryWalker.entries(of: destination.root)) ?? []
        let moveNames: Set<String> = [
            ImageManifest.storeFolder, ImageManifest.fileName, ImageManifest.signatureFileName,
            StoreLayout.downloadsFolderName, StoreLayout.catalogFileName,
        ]
        // A lock file is no data: opening the destination (`mappack store status` there) makes one, and the
        // partial copy beside it is still this move's to remove (else both folders repair to a store).
        let onlyOurs = entries.allSatisfy {
            moveNames.contains($0) || $0 == StoreLayout.lockFileName || $0.hasPrefix(StoreLayout.stagingPrefix)
        }
        let copiedManifest = try? ImageVerifier.readManifest(
            ReadableFile.contents(of: destination.manifest, limit: ImageVerifier.maxManifestBytes),
            file: destination.manifest
        ).0
        let manifestOurs = !FileSystem.exists(destination.manifest) || (copiedManifest != nil && copiedManifest?.imageID == imageID)
        if onlyOurs, manifestOurs, !FileSystem.exists(destination.state), destination.root != layout.root {
            for name in entries where name.hasPrefix(StoreLayout.stagingPrefix) {
                try FileSystem.removeTree(destination.root + "/" + name)
            }
            try FileSystem.removeTree(destination.store)
            try FileSystem.removeTree(destination.root + "/" + StoreLayout.downloadsFolderName)
            try FileSystem.removeFile(destination.root + "/" + StoreLayout.catalogFileName)
            try FileSystem.removeFile(destination.manifest)
            try FileSystem.removeFile(destination.signature)
        }
        try state?.clearPending()
        return .rolledBackMove
    }
}
