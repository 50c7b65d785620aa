import Foundation
import MapFetch
import MapFormat
import MapIO
import MapVerify

/// Switching the store to a new manifest (an update to a new map version, or regions downloaded
/// at run time): the new store tree is staged beside the old one, then swapped in with renames
/// while a pending row records the target, so a kill at any point leaves exactly the old or the
/// new version after `repair()`.
///
/// Folders inside the storage during a transition, each a `StagingArea`:
/// - `.staging-<pid>/` — being built (removed at open once its process is gone: a kill here rolls back);
/// - `.update-next/` — complete new `store/` and `manifest.json` (its existence means "roll forward");
/// - `.update-old/` — the old `store/` and `manifest.json` set aside, removed after the commit.
extension StoreCore {
    /// `.update-next`: complete, it means "roll forward".
    var next: StagingArea { StagingArea(for: "", kind: .updateNext, in: layout.root) }
    /// `.update-old`: the committed version's tree and manifest, set aside during the switch.
    var old: StagingArea { StagingArea(for: "", kind: .updateOld, in: layout.root) }
    var nextFolder: String { next.path }
    var oldFolder: String { old.path }
    /// Bundles fetched for updates and downloads, with partial files for resuming.
    var downloadFolder: String { layout.root + "/" + StoreLayout.downloadsFolderName }
    /// The catalog of the installed map version, kept for region listings and downloads.
    var keptCatalogPath: String { layout.root + "/" + StoreLayout.catalogFileName }

    /// What a transition installs.
    struct TransitionTarget {
        /// `update` or `download`; prefixes crash point names.
        var kind: String
        /// The manifest after the switch.
        var manifest: ImageManifest
        /// Bundles new to the device and the verified archives to extract them from.
        var archives: [BundleDigest: String]
        /// Declared sizes of the new bundles, for extraction limits.
        var infos: [BundleDigest: BundleInfo]
        /// States after the commit.
        var states: [RegionID: RegionState]
        /// Meta set with the commit.
        var meta: [StateMetaKey: String]
        /// Clear the cache (and stamp it with the new version) before the switch.
        var resetsCache: Bool
        /// With `resetsCache`: the regions whose cache entries stay (their bundles are unchanged).
        var cacheKeeps: Set<RegionID> = []
        /// An added catalog's rows the commit records (nil for the image's catalog).
        var catalog: CatalogCommit? = nil
        /// The paths whose copies in the storage's tree the new tree keeps (nil: every unchanged file it
        /// holds); a new base keeps only the added catalogs' files.
        var keepsOwn: Set<String>? = nil
    }

    /// Builds the manifest for `regions` of `tree` (and `kept` regions copied from the stored manifest),
    /// reusing the stored manifest's records for bundles already on the device and `extracted` files for new ones.
    /// `ofImageCatalog`: `tree` is the image's catalog, whose id and version the manifest takes; the
    /// regions of an added catalog leave the manifest's identity as it was.
    func synthesizeManifest(
        old: ImageManifest, tree: RegionTree, regions: [RegionID], kept: [RegionID],
        extracted: [BundleDigest: [ExtractedFile]], ofImageCatalog: Bool = true
    ) -> ImageManifest {
        let language = old.language
        var imageRegions: [ImageRegion] = []
        for id in regions {
            guard let region = tree.region(id) else { continue }
            imageRegions.append(
                ImageRegion(
                    id: region.id, parent: region.parent, name: region.name(in: language), names: region.names,
                    bundles: region.bundles, sizeOnDiskInBytes: 0, center: region.center, bbox: region.bbox,
                    cities: region.cities, released: region.released))
        }
        for id in kept { if let region = old.region(id) { imageRegions.append(region) } }
        let wanted = Set(imageRegions.flatMap(\.bundles))
        let oldBundles = Dictionary(old.bundles.map { ($0.digest, $0) }, uniquingKeysWith: { first, _ in first })
        var bundles: [ImageBundle] = []
        var files: [ImageFile] = []
        for digest in wanted.sorted() {
            if let record = oldBundles[digest] {
                bundles.append(record)
            } else if let info = tree.catalog.bundles[digest] {
                let got = extracted[digest] ?? []
                bundles.append(
                    ImageBundle(digest: digest, size: info.size, url: info.url, files: got.count, unpackedSize: got.reduce(0) { $0 + $1.size }))
                files += got.map { ImageFile(path: $0.path, size: $0.size, sha256: $0.sha256, bundle: digest) }
            }
        }
        files += old.files.filter { wanted.contains($0.bundle) && oldBundles[$0.bundle] != nil }
        files.sort { $0.path < $1.path }
        imageRegions.sort { $0.id < $1.id }
        var manifest = ImageManifest(
            name: old.name, catalog: ofImageCatalog ? tree.catalog.catalog : old.catalog,
            mapVersion: ofImageCatalog ? tree.catalog.mapVersion : old.mapVersion,
            built: ofImageCatalog ? tree.catalog.released.flatMap(UTCTime.normalised) ?? old.built : old.built,
            mappackVersion: old.mappackVersion, blockSize: old.blockSize,
            language: language, regions: imageRegions, bundles: bundles, files: files, cacheSeed: nil)
        let sizes = manifest.derivedSizesOnDisk()
        for index in manifest.regions.indices { manifest.regions[index].sizeOnDiskInBytes = sizes[manifest.regions[index].id] ?? 0 }
        manifest.imageID = (try? SHA256.hex(manifest.bytesForID())) ?? ""
        return manifest
    }

    /// Stages, switches and commits. `build` extracts the new bundles into the staging store and returns
    /// the manifest to install (it sees the extracted files). Failures before the switch roll back at once;
    /// a failure during the switch leaves the pending row for `repair()`.
    func transition(kind: String, regions: [RegionID], build: (_ stagingStore: String) throws -> TransitionTarget) throws -> ImageManifest {
        let state = try committedState()
        let current = try installedManifest(storedManifest())
        let staging = layout.staging
        var target: TransitionTarget
        do {
            try FileSystem.removeTree(staging)
            try FileSystem.removeTree(nextFolder)
            try FileSystem.removeTree(oldFolder)
            try FileSystem.makeDirectories(staging + "/" + ImageManifest.storeFolder)
            // The pending row names the target only once it is known; until `.update-next` exists,
            // repair rolls back whatever it says.
            try state.markPending(.transition(TransitionRecord(startingTransition: kind)))
            CrashPoint.reach("\(kind).afterMark")
            target = try build(staging + "/" + ImageManifest.storeFolder)
            try Self.checkSingleOwners(target.manifest)
            CrashPoint.reach("\(kind).midStaging", storage: layout.root)
            let newBundles = Set(target.archives.keys)
            let onDevice = Dictionary(current.files.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
            // In place, unchanged files the storage does not hold stay in the base, where they are read.
            let linked = ownFiles(
                target.manifest.files.filter {
                    !newBundles.contains($0.bundle) && onDevice[$0.path] == $0 && target.keepsOwn?.contains($0.path.string) != false
                })
            try FileSteps.copyFiles(
                linked.map { ($0.path.string, $0.size) }, from: layout.store, to: staging + "/" + ImageManifest.storeFolder, link: true)
            try stageAgainstBase(target.manifest, extracted: newBundles, in: staging + "/" + ImageManifest.storeFolder)
            try FileSteps.writeDurably(try target.manifest.canonicalBytes(), to: staging + "/" + ImageManifest.fileName)
            try FileSystem.syncTree(staging)
            CrashPoint.reach("\(kind).afterStaging")
            let record = TransitionRecord(kind: kind, manifest: target.manifest, states: target.states, meta: target.meta, catalog: target.catalog)
            try state.markPending(.transition(record))
            CrashPoint.reach("\(kind).beforeNext")
            if target.resetsCache {
                // Before the switch: a cache newer than the store is harmless, an older one is not.
                cacheReset = try caches.with { try $0.reset(mapVersion: target.manifest.mapVersion, keeping: target.cacheKeeps) }
                CrashPoint.reach("\(kind).afterCacheReset")
            }
        } catch {
            // Rolled back before the switch. The failure the caller hears is the cause; a staging folder that
            // cannot be removed is swept at the next open (`StagingArea.sweepStale`), and a pending record
            // that cannot be cleared makes the store `interruptedOperation`, which `repair()` rolls back.
            do { try FileSystem.removeTree(staging) } catch {}
            do { try state.clearPending() } catch {}
            throw localFailure(error, regions: regions)
        }
        try layout.stagingArea.commit(as: next.name)
        CrashPoint.reach("\(kind).afterNext")
        let record: TransitionRecord
        guard case .transition(let pending)? = try state.pending() else { throw MapStoreError.repairNeeded(status: .interruptedOperation) }
        record = pending
        return try finishTransition(record, crashPrefix: kind)
    }

    /// Refuses a target manifest that lists a file path or a region id twice (no reader accepts one,
    /// so it must never be switched in); the bundles' own checks (`PathOwnership`) name the owners first.
    static func checkSingleOwners(_ manifest: ImageManifest) throws(MapStoreError) {
        for (earlier, later) in zip(manifest.files, manifest.files.dropFirst()) where earlier.path == later.path {
            throw .ownershipConflict(path: earlier.path.string, owners: ["bundle \(earlier.bundle.short)", "bundle \(later.bundle.short)"])
        }
        let ids = manifest.regions.map(\.id).sorted()
        for (earlier, later) in zip(ids, ids.dropFirst()) where earlier == later {
            throw .ownershipConflict(path: "region \(earlier)", owners: ["region \(earlier)", "region \(later) (listed again)"])
        }
    }

    /// Rolls a transition forward from `.update-next`: renames, commit, cleanup. Idempotent.
    /// `afterKill`: a repair finishing a switch that was killed or cut off, whose live tree may no
    /// longer be whole.
    @discardableResult
    func finishTransition(_ record: TransitionRecord, crashPrefix: String? = nil, afterKill: Bool = false) throws -> ImageManifest {
        guard let state else { throw MapStoreError.notInstalled }
        try keepOldTreeForReaders(liveTreeMayBeIncomplete: afterKill)
        for name in [ImageManifest.storeFolder, ImageManifest.fileName] {
            let live = layout.root + "/" + name
            guard FileSystem.exists(nextFolder + "/" + name) else { continue }
            if FileSystem.exists(live) {
                try FileSystem.makeDirectories(oldFolder)
                if FileSystem.exists(oldFolder + "/" + name) {
                    try FileSystem.removeTree(live)
                } else {
                    try old.takeIn(name, as: name)
                }
                if let crashPrefix, name == ImageManifest.storeFolder { CrashPoint.reach("\(crashPrefix).midSwitch") }
            }
            try next.commit(name, as: name, sync: false)
        }
        try FileSystem.syncDirectory(layout.root)
        if let crashPrefix { CrashPoint.reach("\(crashPrefix).beforeCommit") }
        let manifest = try storedManifest()
        // A new base installs its regions afresh, whatever the device had made of them.
        let fresh = record.kind == Self.rebaseKind ? Set(try baseManifest()?.regions.map(\.id) ?? []) : []
        try state.commitTransition(manifest, states: record.regionStates, meta: record.metaRows, catalog: record.catalog, fresh: fresh)
        // Readers switch to the new tree with the committed state, before the old copy goes.
        publishForReaders(snapshot())
        if let crashPrefix { CrashPoint.reach("\(crashPrefix).afterCommit") }
        // The image's signature does not cover the new manifest (the state no longer asks for it).
        try FileSystem.removeFile(layout.signature)
        try FileSystem.removeTree(oldFolder)
        if let crashPrefix { CrashPoint.reach("\(crashPrefix).midPurge") }
        try FileSystem.removeTree(nextFolder)
        try FileSystem.syncDirectory(layout.root)
        return manifest
    }

    /// The committed version's whole tree while a switch is under way or was killed midway: `.update-old/store`
    /// appears whole (a copy renamed into place, or the live tree moved there) and only once the switch
    /// may begin, so while a transition is pending it, not the live tree (half switched, or switched before
    /// the commit), is what readers of the committed version read. Nil when there is none.
    var committedTreeDuringSwitch: String? {
        let tree = oldFolder + "/" + ImageManifest.storeFolder
        return FileSystem.isDirectory(tree) ? tree : nil
    }

    /// Before a switch replaces the live store tree: when readers are watching (`publisher`), a hard-linked
    /// copy of it in `.update-old/store`, published as their store folder, so that until the commit they
    /// read the committed version's files (the switch then removes the live tree instead of moving it
    /// there). Idempotent: a repair finishing a killed switch publishes the tree already there. A kill
    /// leaves `.update-old`, which the switch's finish or roll-back removes.
    ///
    /// `liveTreeMayBeIncomplete` (a repair): a power cut can keep part of the switch's removal of the
    /// live tree and lose the rename that made the copy (a filesystem that does not keep metadata
    /// changes in order; `make powercut`'s harsh model). The committed version is then gone from the
    /// device, there is nothing to show readers, and the switch rolls forward without a copy.
    private func keepOldTreeForReaders(liveTreeMayBeIncomplete: Bool = false) throws {
        guard publisher != nil else { return }
        if committedTreeDuringSwitch == nil {
            guard FileSystem.isDirectory(nextFolder + "/" + ImageManifest.storeFolder), FileSystem.isDirectory(layout.store),
                let files = try? installedManifest(storedManifest()).files
            else { return }
            // Copied beside, then renamed: `.update-old/store` is never a partial tree.
            let partial = try StagingArea(for: ImageManifest.storeFolder, kind: .staging, in: oldFolder).makeFolder()
            do {
                // In place: the storage's own files and hiding markers (the base stays where it is).
                if base != nil {
                    try copyOwnTree(to: partial.path, link: true)
                } else {
                    try FileSteps.copyFiles(files.map { ($0.path.string, $0.size) }, from: layout.store, to: partial.path, link: true)
                }
            } catch let error as FileError where liveTreeMayBeIncomplete && (error.code == ENOENT || error.code == ENOTDIR) {
                try FileSystem.removeTree(partial.path)
                return
            }
            try partial.commit(as: ImageManifest.storeFolder, sync: false)
        }
        guard let copy = committedTreeDuringSwitch else { return }
        var readers = snapshot()
        readers.pending = false
        readers.storeFolder = copy
        publishForReaders(readers)
    }

    /// After a killed transition: finish it when the new tree was complete, else roll it back.
    /// A new tree whose manifest no reader accepts (an earlier version could switch in one that lists a
    /// path twice, issue 40) is rolled back to the committed tree set aside in `.update-old`, never
    /// finished: finishing it would fail at every repair.
    func finishOrRollBackTransition(_ record: TransitionRecord) throws -> RepairReport.Action {
        if FileSystem.isDirectory(nextFolder), !record.imageID.isEmpty {
            if targetManifestReads() {
                let manifest = try finishTransition(record, afterKill: true)
                return .finishedUpdate(to: manifest.mapVersion)
            }
            try restoreCommittedTree()
        }
        try FileSystem.removeTree(nextFolder)
        try FileSystem.removeTree(oldFolder)
        try state?.clearPending()
        return .rolledBackUpdate
    }

    /// Whether the switch's new manifest (in `.update-next`, or live once switched) reads as a manifest.
    private func targetManifestReads() -> Bool {
        let staged = nextFolder + "/" + ImageManifest.fileName
        let path = FileSystem.exists(staged) ? staged : layout.manifest
        guard let data = try? ReadableFile.contents(of: path, limit: ImageVerifier.maxManifestBytes) else { return false }
        return (try? ImageVerifier.readManifest(data, file: path)) != nil
    }

    /// Puts the committed tree and manifest set aside in `.update-old` back in place of what the
    /// switch had moved in (the state still records the committed version: the switch never committed).
    private func restoreCommittedTree() throws {
        for name in [ImageManifest.storeFolder, ImageManifest.fileName] where FileSystem.exists(oldFolder + "/" + name) {
            try FileSystem.removeTree(layout.root + "/" + name)
            try old.commit(name, as: name, sync: false)
        }
        // In place at the base, the committed version kept no manifest of its own: the base's is read again.
        if let state, base != nil, try state.imageID == state.meta(.baseImageID), !FileSystem.exists(oldFolder + "/" + ImageManifest.fileName) {
            try FileSystem.removeFile(layout.manifest)
        }
        try FileSystem.syncDirectory(layout.root)
    }

    /// Removes transition folders a committed transition left behind (killed during cleanup).
    func removeTransitionLeftovers() {
        // Spare copies of a committed switch: one that cannot be removed now is tried again at the next open.
        for folder in [nextFolder, oldFolder] where FileSystem.exists(folder) {
            do { try FileSystem.removeTree(folder) } catch {}
        }
    }

    /// A fetch request for each `wanted` bundle the catalog lists, in digest order, naming the
    /// regions that want it (errors about its URL name them).
    static func fetchRequests(for wanted: [BundleDigest: [RegionID]], tree: RegionTree, catalogURL: URL) throws -> [FetchRequest] {
        try wanted.keys.sorted().compactMap { digest throws -> FetchRequest? in
            guard let info = tree.catalog.bundles[digest] else { return nil }
            let regions = wanted[digest] ?? []
            return FetchRequest(
                digest: digest, url: try CatalogLoader.bundleURL(info.url, catalog: catalogURL, bundle: digest, regions: regions),
                size: info.size, regions: regions)
        }
    }

    /// The bundles of `regions` that `old` does not hold, each with the regions that need it; throws
    /// `.local` when one of them is not among the fetched `archives`.
    func bundlesToInstall(
        for regions: [RegionID], tree: RegionTree, old: ImageManifest, archives: [BundleDigest: String]
    ) throws -> [BundleDigest: [RegionID]] {
        let onDevice = Set(old.bundles.map(\.digest))
        var needed: [BundleDigest: [RegionID]] = [:]
        for id in regions {
            for bundle in tree.region(id)?.bundles ?? [] where !onDevice.contains(bundle) { needed[bundle, default: []].append(id) }
        }
        for digest in needed.keys where archives[digest] == nil {
            throw MapStoreError.local(
                path: downloadFolder, errno: nil, regions: needed[digest] ?? [], bundle: digest, reason: "bundle was not fetched")
        }
        return needed
    }

    /// Extracts the `needed` bundles (from `bundlesToInstall`) from `archives` into `store`, in digest order,
    /// each file claimed in `ownership` (seeded with the files that stay): a path another bundle owns is
    /// refused with `ownershipConflict` before the switch, so the live store never sees it.
    func extractBundles(
        _ needed: [BundleDigest: [RegionID]], tree: RegionTree, archives: [BundleDigest: String], into store: String,
        ownership: inout PathOwnership
    ) throws -> [BundleDigest: [ExtractedFile]] {
        var extracted: [BundleDigest: [ExtractedFile]] = [:]
        for digest in needed.keys.sorted() {
            guard let info = tree.catalog.bundles[digest], let archive = archives[digest] else { continue }
            let files = try extractBundle(digest, archive: archive, info: info, into: store, regions: needed[digest] ?? [], ownership: ownership)
            for file in files { try ownership.claim(file.path.string, by: digest) }
            extracted[digest] = files
        }
        return extracted
    }

    /// The ownership of the files `old` keeps in a transition whose target holds `bundles`, naming a
    /// bundle by the regions of `old` and `tree` that use it.
    func ownership(keeping bundles: Set<BundleDigest>, of old: ImageManifest, tree: RegionTree) -> PathOwnership {
        var users: [BundleDigest: Set<RegionID>] = [:]
        for region in old.regions { for bundle in region.bundles { users[bundle, default: []].insert(region.id) } }
        for region in tree.regions { for bundle in region.bundles { users[bundle, default: []].insert(region.id) } }
        return PathOwnership(kept: old.files.filter { bundles.contains($0.bundle) }) { bundle in
            let regions = (users[bundle] ?? []).map(\.rawValue).sorted()
            return (regions.isEmpty ? "" : "region\(regions.count == 1 ? "" : "s") \(regions.joined(separator: ", ")) ") + "(bundle \(bundle.short))"
        }
    }

    /// Extracts `archive` (a verified bundle) into `store`, mapping failures to `MapStoreError.local`, and
    /// an entry that lands on a path of another bundle in `ownership` to `ownershipConflict`. Not
    /// fsynced here: a staged tree is made durable as a whole (`FileSystem.syncTree`) before its rename.
    func extractBundle(
        _ digest: BundleDigest, archive: String, info: BundleInfo, into store: String, regions: [RegionID], ownership: PathOwnership? = nil
    ) throws -> [ExtractedFile] {
        let extractor = SafeExtractor(limits: .declared(unpackedSize: info.unpackedSize, files: info.files))
        do { return try extractor.extract(archive: archive, into: store) } catch {
            if let ownership {
                var taken: String?
                switch error {
                case .io(let file) where file.code == EEXIST && file.path.hasPrefix(store + "/"): taken = String(file.path.dropFirst(store.count + 1))
                case .underFile(_, let file): taken = file
                default: break
                }
                if let taken, let owner = ownership.owner(of: taken), owner != digest { throw ownership.conflict(taken, owner, digest) }
            }
            if case .io(let file) = error {
                throw MapStoreError.local(path: file.path, errno: file.code, regions: regions, bundle: digest, reason: file.description)
            }
            throw MapStoreError.local(path: archive, errno: nil, regions: regions, bundle: digest, reason: "bundle refused: \(error.description)")
        }
    }

    /// `error` as a `MapStoreError` (file-system failures become `.local` naming `regions`).
    func localFailure(_ error: any Error, regions: [RegionID]) -> any Error {
        if let file = error as? FileError {
            return MapStoreError.local(path: file.path, errno: file.code, regions: regions, bundle: nil, reason: file.description)
        }
        if let database = error as? SQLiteError {
            // SQLITE_FULL: the state database could not grow (its journal included): the disk is full.
            return MapStoreError.local(
                path: database.path, errno: database.isDiskFull ? ENOSPC : nil, regions: regions, bundle: nil, reason: database.description)
        }
        return error
    }
}
