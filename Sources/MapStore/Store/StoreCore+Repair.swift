import Foundation
import MapFetch
import MapFormat
import MapIO
import MapVerify

/// Finishing or rolling back interrupted work, rebuilding a lost state, and restoring files from the image.
///
/// Repair never removes data that verifies unless an offered image has been validated (staged in
/// full) to replace it, and never claims work it did not do.
extension StoreCore {
    func repair(linkFiles: Bool, fetcher: RepairFetcher?) throws -> RepairReport {
        var actions: [RepairReport.Action] = []
        removeLeftovers()
        // A state database that cannot be read is rebuilt below from the kept manifest and the files.
        var stateUnreadable: String?
        if state == nil, FileSystem.exists(layout.state) {
            do {
                let opened = try StateDatabase(path: layout.state)
                _ = try opened.pending()
                _ = try opened.imageID
                _ = try opened.regions()
                state = opened
            } catch {
                stateUnreadable = "it could not be read (\(error))"
            }
        }
        // An empty, truncated or freshly created database recorded nothing, not an install that began.
        if let state, (try? state.isBlank) != false {
            self.state = nil
            stateUnreadable = "it was empty (no installed image, no pending operation)"
        }
        let stateLost = stateUnreadable != nil || !FileSystem.exists(layout.state)
        // In place, the storage's own files mean nothing without the state that named their base: the
        // store starts over on the image (what the device wrote since is gone, as after a factory reset).
        if stateLost, inPlace, let image, FileSystem.exists(layout.store) || FileSystem.exists(layout.state) {
            try wipe()
            try installInPlace(image)
            return RepairReport(actions: [.reinstalled], storage: layout.rootURL, status: .ok)
        }
        let pending = stateLost ? nil : try state?.pending()
        let committed = stateLost ? nil : try state?.imageID
        let kept = try? keptManifest()
        // An install that never committed: its files are not data anyone has used.
        // (An install's pending row never outlives its commit: beside a committed image it is garbage.)
        var interruptedInstall = !stateLost && committed == nil
        if stateLost, kept == nil || !FileSystem.isDirectory(layout.store) {
            // Without a state and a kept manifest nothing tells what the files are; they are replaced
            // only by a validated image.
            if FileSystem.exists(layout.store) {
                return try replace(with: linkFiles, reason: "the state database and the kept \(ImageManifest.fileName) are both lost or unreadable")
            }
            interruptedInstall = true
        }
        if interruptedInstall {
            let hadAnything = FileSystem.exists(layout.state) || FileSystem.exists(layout.store) || FileSystem.exists(layout.manifest)
            try wipe()
            if let image {
                if inPlace { try installInPlace(image) } else { try install(image, linkFiles: linkFiles) }
                return RepairReport(actions: [.reinstalled], storage: layout.rootURL, status: .ok)
            }
            return RepairReport(actions: hadAnything ? [.rolledBackInstall] : [], storage: layout.rootURL, status: .empty)
        }
        if pending == nil, !stateLost, let offered = try? offeredFolderManifest(), let installed = try state?.mapVersion,
            offered.mapVersion > installed
        {
            return try replace(with: linkFiles, reason: "newer image offered")
        }
        if let state, !stateLost {
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
                    if FileSystem.exists(seed), try seedMatchesKeptManifest(seed) { try importPendingSeed(seed, storeVersion: version) }
                }
                try state.clearPending()
                actions.append(.finishedCacheImport)
            case .move(let destination)?:
                actions.append(try finishOrRollBackMove(to: destination))
            case .transition(let record)?:
                actions.append(try finishOrRollBackTransition(record))
            case .install?:
                try state.clearPending()
                actions.append(.discardedPendingRecord)
            case nil:
                break
            }
            // The interrupted work settled (rolled back, or never a switch): what it was fetching waits, paused.
            let paused = pausedAtOpen + (pending != nil ? try pauseInterruptedFetches() : [])
            pausedAtOpen = []
            if !paused.isEmpty { actions.append(.pausedInterruptedFetch(regions: Set(paused).count)) }
            guard FileSystem.exists(layout.state) else {
                return RepairReport(actions: actions, storage: layout.rootURL, status: .ok)
            }
        }
        // In place, a new base that an interrupted switch to it (`reconcileBase`) left untaken is taken over
        // now that the store is settled: the files the state names are the new base's.
        var tookOver = false
        if inPlace, let image, !stateLost, (try? state?.pending()) == .some(nil), baseChanged(image) {
            _ = try reconcileBase(image)
            tookOver = true
            if let version = try state?.mapVersion { actions.append(.tookOverNewBase(to: version)) }
        }
        // The interrupted operation is settled: a cancellation from here on leaves a committed state.
        try checkCancelled()
        // The kept manifest: sound, or restored from the offered image when that is the installed one.
        var manifest: ImageManifest
        let keptNow = pending == nil && !tookOver ? kept : try? keptManifest()
        if let keptNow, try isSound(keptNow, stateLost: stateLost) {
            manifest = keptNow.manifest
        } else {
            let why =
                keptNow == nil
                ? "the kept \(ImageManifest.fileName) is missing or unreadable" : "the kept \(ImageManifest.fileName) was changed after install"
            guard image != nil else { throw MapStoreError.imageNeededForRepair(reason: why) }
            let recorded = stateLost ? nil : try state?.imageID
            guard let restored = try restoreKeptManifest(ifImageIs: recorded) else {
                return try replace(with: linkFiles, reason: why)
            }
            manifest = restored
            actions.append(.restoredManifest)
        }
        actions += try rebuildStateIfNeeded(manifest, unreadable: stateUnreadable)
        let (restored, removed): ([RepairReport.Source: Int], Int)
        do { (restored, removed) = try restoreFiles(manifest, fetcher: fetcher) } catch var retry as RepairRetry {
            retry.actions = actions + retry.actions
            throw retry
        }
        actions += Self.fileActions(restored: restored, removed: removed)
        try FileSystem.removeTree(layout.staging)
        return RepairReport(actions: actions, storage: layout.rootURL, status: .ok)
    }

    /// The report's lines for files restored (by source) and removed.
    static func fileActions(restored: [RepairReport.Source: Int], removed: Int) -> [RepairReport.Action] {
        var actions: [RepairReport.Action] = []
        for source in [RepairReport.Source.image, .downloadCache, .network] {
            if let count = restored[source], count > 0 { actions.append(.restoredFiles(count: count, from: source)) }
        }
        if removed > 0 { actions.append(.removedFiles(count: removed)) }
        return actions
    }

    /// True when the kept manifest can be trusted: its id matches its content and, with trusted keys,
    /// its kept signature verifies. Disagreements with the state are not counted: the state is rebuilt.
    private func isSound(_ kept: KeptManifest, stateLost: Bool) throws -> Bool {
        guard kept.problems.isEmpty else { return false }
        if !stateLost {
            return try keptManifestProblems(kept, signature: true).allSatisfy { $0.path == StoreLayout.stateFileName }
        }
        guard !trustedKeys.isEmpty, FileSystem.exists(keptSignaturePath) else { return true }
        let signature = try? ReadableFile.contents(of: keptSignaturePath, limit: 4096)
        return (try? ImageVerifier.checkSignature(manifestBytes: kept.bytes, signature: signature, trusted: trustedKeys)) == .some(nil)
    }

    /// Replaces the storage's data with the offered image, staged and validated in full first: a
    /// refused image throws and leaves the storage as it was.
    private func replace(with linkFiles: Bool, reason: String) throws -> RepairReport {
        guard let image else { throw MapStoreError.imageNeededForRepair(reason: reason) }
        if inPlace {
            // Used in place, the image replaces nothing: it is checked, and the storage starts over on it.
            try wipe()
            try installInPlace(image)
            return RepairReport(actions: [.reinstalled], storage: layout.rootURL, status: .ok)
        }
        let staged = try stage(image, link: linkFiles)
        do { try checkCancelled() } catch {
            // Staged, not committed: a staging folder left behind is swept at the next open.
            do { try FileSystem.removeTree(layout.staging) } catch {}
            throw error
        }
        try replaceWithStaged(staged)
        return RepairReport(actions: [.reinstalled], storage: layout.rootURL, status: .ok)
    }

    /// When the offered image (validated: id, sizes, signature with trusted keys) is image `imageID`,
    /// puts its manifest and signature back as the kept ones and returns the manifest; nil when it is
    /// another image (or `imageID` is unknown).
    private func restoreKeptManifest(ifImageIs imageID: String?) throws -> ImageManifest? {
        guard let image, let imageID else { return nil }
        let folder = try imageFolder(scratch: layout.staging)
        let checked = try checkedManifest(at: folder + "/" + ImageManifest.fileName, image: image)
        guard checked.manifest.imageID == imageID else { return nil }
        if let signature = checked.signature {
            try FileSystem.writeAtomically(signature, to: layout.signature)
        } else {
            try FileSystem.removeFile(layout.signature)
        }
        try FileSystem.writeAtomically(checked.bytes, to: layout.manifest)
        try state?.setMeta(.signature, checked.signature != nil ? StateDatabase.signatureKept : StateDatabase.signatureNone)
        return checked.manifest
    }

    /// Rebuilds the state from `manifest` and the files when it was lost or unreadable, names another
    /// image or map version, or lacks rows of regions whose files are on disk.
    /// After a lost database, also the regions of the catalogs added to the store it named (see
    /// `RepairReport.Action.regionsOfForgottenCatalogs`).
    private func rebuildStateIfNeeded(_ manifest: ImageManifest, unreadable: String?) throws -> [RepairReport.Action] {
        var reasons: [String] = []
        var rows: [StoredRegion] = []
        var stateLost = true
        if let unreadable {
            reasons.append(unreadable)
        } else if let state, FileSystem.exists(layout.state) {
            stateLost = false
            rows = try state.regions()
            if let recorded = try state.imageID, recorded != manifest.imageID {
                reasons.append("it named image \(recorded.prefix(16)), the kept manifest is \(manifest.imageID.prefix(16))")
            }
            if let recorded = try state.mapVersion, recorded != manifest.mapVersion {
                reasons.append("it said map version \(recorded), the kept manifest is \(manifest.mapVersion)")
            }
        } else {
            reasons.append("it was missing")
        }
        let listed = Set(manifest.regions.map(\.id))
        let present = presentRegions(manifest)
        let known = Set(rows.map(\.id))
        let lost = present.subtracting(known)
        if reasons.isEmpty, !lost.isEmpty {
            reasons.append("it had lost the rows of \(lost.count) region\(lost.count == 1 ? "" : "s") whose files are installed")
        }
        if reasons.isEmpty, !known.isSubset(of: listed) { reasons.append("it listed regions the kept manifest does not have") }
        // A state this library does not know reads as `needUpdate`; the full check of the files below
        // (`restoreFiles`) is what lets the rebuilt row say `completed` again.
        let unknownStates = unreadable == nil && state != nil ? Set(try state?.regionsWithUnknownState() ?? []) : []
        if !unknownStates.isEmpty {
            reasons.append("it held states this library does not know for \(unknownStates.sorted().map(\.rawValue).joined(separator: ", "))")
        }
        guard !reasons.isEmpty else { return [] }
        if unreadable != nil || state == nil {
            state = nil
            for path in [layout.state, layout.state + "-journal", layout.state + "-wal", layout.state + "-shm"] { try FileSystem.removeTree(path) }
            state = try StateDatabase(path: layout.state)
        }
        guard let state else { throw MapStoreError.notInstalled }
        let regions = known.intersection(listed).union(present)
        let states = Dictionary(rows.filter { !unknownStates.contains($0.id) }.map { ($0.id, $0.state) }, uniquingKeysWith: { first, _ in first })
        try state.rebuild(from: manifest, regions: regions, states: states, signed: FileSystem.exists(layout.signature))
        var actions: [RepairReport.Action] = [.rebuiltState(reason: reasons.joined(separator: "; "), regions: regions.count)]
        // Only the lost database named the added catalogs; their regions are those the image's catalog does not offer.
        if stateLost, let image = keptCatalog() {
            let forgotten = regions.filter { image.region($0) == nil }.sorted()
            if !forgotten.isEmpty { actions.append(.regionsOfForgottenCatalogs(forgotten)) }
        }
        return actions
    }

    /// The manifest's regions whose data is on disk: a region with files no other region shares is
    /// there when one of those files is (a deletion removes them all); a region whose bundles are all
    /// shared is there when all their files are.
    func presentRegions(_ manifest: ImageManifest) -> Set<RegionID> {
        var users: [BundleDigest: Int] = [:]
        for region in manifest.regions { for bundle in Set(region.bundles) { users[bundle, default: 0] += 1 } }
        var files: [BundleDigest: [String]] = [:]
        for file in manifest.files { files[file.bundle, default: []].append(file.path) }
        let exists = { (path: String) in (try? self.layout.storePath(path)).map(FileSystem.exists) ?? false }
        var present = Set<RegionID>()
        for region in manifest.regions {
            let own = region.bundles.filter { users[$0] == 1 }.flatMap { files[$0] ?? [] }
            let there = own.isEmpty ? region.bundles.flatMap { files[$0] ?? [] }.allSatisfy(exists) : own.contains(where: exists)
            if there { present.insert(region.id) }
        }
        return present
    }

    /// True when `seed` is the cache seed the kept manifest records (digest, size and rows).
    private func seedMatchesKeptManifest(_ seed: String) throws -> Bool {
        guard let expected = try storedManifest().cacheSeed, let (digest, size) = try? SHA256.digestOfFile(seed),
            digest == expected.sha256, size == expected.size
        else { return false }
        return (try? MapCache.checkSeedRows(at: seed, entries: expected.entries)) != nil
    }

    /// Full verification against `manifest`; every extra file is removed and every missing or corrupt one
    /// restored from what can provide it, in this order: the offered image (a file it shipped with the
    /// same SHA-256), a verified archive of the file's bundle in the download cache, or the bundle fetched
    /// again by digest from the catalog (`fetcher`, obeying the network policy). Each restored file is
    /// hashed before it counts. Returns how many files came from each source and how many were removed.
    private func restoreFiles(_ manifest: ImageManifest, fetcher: RepairFetcher?) throws -> (restored: [RepairReport.Source: Int], removed: Int) {
        if !FileSystem.isDirectory(layout.store) {
            try FileSystem.removeTree(layout.store)
            try FileSystem.makeDirectories(layout.store)
        }
        let problems = try verify(full: true, manifest: manifest)
        guard !problems.isEmpty else { return ([:], 0) }
        CrashPoint.reach("repair.afterVerify", storage: layout.root)
        try checkCancelled()
        let records = Dictionary(manifest.files.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        var removed = 0
        var damaged: [ImageFile] = []
        for problem in problems {
            let target = try layout.storePath(problem.path)
            if problem.kind == .extra {
                try FileSystem.removeTree(target)
                FileSteps.pruneEmptyFolders(above: target, root: layout.store)
                removed += 1
            } else if let record = records[problem.path] {
                damaged.append(record)
            }
        }
        var restored: [RepairReport.Source: Int] = [:]
        var why: [String] = []
        if !damaged.isEmpty {
            if image != nil {
                do { damaged = try restoreFromImage(damaged, restored: &restored) } catch MapStoreError.cancelled {
                    throw MapStoreError.cancelled
                } catch { why.append("the offered image: \(error)") }
            } else {
                why.append("no preinstalled image was offered")
            }
        }
        if !damaged.isEmpty {
            do { damaged = try restoreFromBundles(damaged, manifest: manifest, fetcher: fetcher, restored: &restored, why: &why) } catch var retry
                as RepairRetry
            {
                // What this pass restored stays; the next pass, after the wait, fetches the rest.
                try FileSteps.syncFolders(layout.store)
                retry.actions = Self.fileActions(restored: restored, removed: removed)
                throw retry
            }
        }
        try FileSteps.syncFolders(layout.store)
        if !damaged.isEmpty {
            let reason = "\(damaged.count) installed file(s) are missing or damaged, e.g. \(damaged[0].path); \(why.joined(separator: "; "))"
            if image == nil { throw MapStoreError.imageNeededForRepair(reason: reason) }
        }
        let left = try verify(full: true, manifest: manifest)
        if !left.isEmpty { throw MapStoreError.repairFailed(problems: left) }
        return (restored, removed)
    }

    /// Restores the `files` the offered image ships with the same SHA-256 and size; returns the others.
    private func restoreFromImage(_ files: [ImageFile], restored: inout [RepairReport.Source: Int]) throws -> [ImageFile] {
        let source = try imageFolder(scratch: layout.staging)
        let offered = try ImageVerifier.readManifest(
            try ReadableFile.contents(of: source + "/" + ImageManifest.fileName, limit: ImageVerifier.maxManifestBytes),
            file: source + "/" + ImageManifest.fileName
        ).0
        let shipped = Dictionary(offered.files.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        var left: [ImageFile] = []
        for file in files {
            try checkCancelled()
            let target = try layout.storePath(file.path)
            guard let candidate = shipped[file.path], candidate.sha256 == file.sha256,
                candidate.size == file.size,
                try restore(target, from: source + "/" + ImageManifest.storeFolder + "/" + file.path, expecting: file)
            else {
                left.append(file)
                continue
            }
            restored[.image, default: 0] += 1
        }
        return left
    }

    /// Restores `files` from their bundles: a verified archive in the download cache, else one fetched
    /// by digest (when `fetcher` and a catalog URL allow); returns the files still not restored and adds
    /// why to `why`. Archives used are removed from the download cache afterwards (their files are installed).
    private func restoreFromBundles(
        _ files: [ImageFile], manifest: ImageManifest, fetcher: RepairFetcher?,
        restored: inout [RepairReport.Source: Int], why: inout [String]
    ) throws -> [ImageFile] {
        let cache = DownloadCache(root: downloadFolder)
        let scratch = layout.repairBundles
        defer { try? FileSystem.removeTree(scratch) }
        let records = Dictionary(manifest.bundles.map { ($0.digest, $0) }, uniquingKeysWith: { first, _ in first })
        var byBundle: [BundleDigest: [ImageFile]] = [:]
        for file in files { byBundle[file.bundle, default: []].append(file) }
        var left: [ImageFile] = []
        var used = Set<BundleDigest>()
        var retry: RepairRetry?
        for digest in byBundle.keys.sorted() {
            try checkCancelled()
            let wanted = byBundle[digest] ?? []
            guard let record = records[digest] else {
                left += wanted
                continue
            }
            var archive: String?
            var source = RepairReport.Source.downloadCache
            if cache.contains(digest), let (actual, size) = try? SHA256.digestOfFile(cache.path(for: digest)), actual == digest.sha256,
                size == record.size
            {
                archive = cache.path(for: digest)
            } else if let fetcher {
                source = .network
                do {
                    let (relative, base) = bundleLocation(digest, fallback: record.url)
                    guard let base else { throw MapStoreError.noCatalogURL }
                    let url = try CatalogLoader.bundleURL(relative, catalog: base, bundle: digest, regions: [])
                    archive = try fetcher.fetch(digest, size: record.size, from: url, into: cache, scratch: scratch)
                } catch let later as RepairRetry {
                    // Never waited for here, under the store's lock: the pass ends and the caller waits.
                    if later.delay >= retry?.delay ?? 0 { retry = later }
                } catch {
                    why.append("bundle \(digest.short): \(error)")
                }
            }
            guard let archive else {
                left += wanted
                continue
            }
            let info = BundleInfo(url: record.url, size: record.size, unpackedSize: record.unpackedSize, files: record.files, kind: nil)
            let folder = scratch + "/" + digest.hex
            try FileSystem.removeTree(folder)
            try FileSystem.makeDirectories(folder)
            _ = try extractBundle(digest, archive: archive, info: info, into: folder, regions: [])
            for file in wanted {
                if try restore(try layout.storePath(file.path), from: folder + "/" + file.path, expecting: file) {
                    restored[source, default: 0] += 1
                } else {
                    left.append(file)
                }
            }
            try FileSystem.removeTree(folder)
            used.insert(digest)
        }
        if !left.isEmpty, fetcher == nil { why.append("the download cache does not hold their bundles") }
        purgeDownloads(used)
        if let retry { throw retry }
        return left
    }

    /// Puts `source` in place at `target` when it has `file`'s size and SHA-256; false (target untouched) otherwise.
    private func restore(_ target: String, from source: String, expecting file: ImageFile) throws -> Bool {
        guard let (digest, size) = try? SHA256.digestOfFile(source), digest == file.sha256, size == file.size else { return false }
        if let baseStore, source == baseStore + "/" + file.path {
            // In place, a sound base file is restored by removing the storage's copy that hid it.
            try FileSystem.removeTree(target)
            return true
        }
        try FileSteps.replaceFile(target, from: source)
        return true
    }
}
