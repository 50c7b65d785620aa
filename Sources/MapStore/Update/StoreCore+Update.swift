import Foundation
import MapFetch
import MapFormat
import MapIO

/// Updates to a newer catalog: plan (what changes, what to fetch) and apply (stage, switch, commit).
extension StoreCore {
    /// An update's plan against the committed state.
    struct UpdatePlan {
        var info: UpdateInfo
        /// Bundles to fetch (not on the device).
        var requests: [FetchRequest]
        /// Installed regions the catalog still has.
        var supported: [RegionID]
        /// Installed regions it dropped (or that were unsupported already).
        var unsupported: [RegionID]
        /// The kept manifest the plan was made from (the chunked fetch's seeds come from it).
        var stored: ImageManifest
    }

    /// The catalog the installed data comes from: what downloads and repair's fetches resolve bundle
    /// URLs against (see `StateMetaKey.installedCatalogURL`).
    var catalogURL: URL? { storedURL(.installedCatalogURL) }

    /// The catalog a check or an update reads when the app names none: the one last checked, else the installed one.
    var catalogToCheck: URL? { storedURL(.checkedCatalogURL) ?? catalogURL }

    private func storedURL(_ key: StateMetaKey) -> URL? {
        ((try? state?.meta(key)) ?? nil).flatMap { $0.isEmpty ? nil : URL(string: $0) }
    }

    /// Compares the installed data of the store's `catalog` (its regions alone) with `tree`, a version of
    /// it; refuses a catalog with an older map version, and one that offers a region id another catalog has.
    func planUpdate(tree: RegionTree, catalog: StoreCatalog, catalogURL: URL, now: Date = Date()) throws -> UpdatePlan {
        guard let installed = catalog.mapVersion else { throw MapStoreError.notInstalled }
        let offered = tree.catalog.mapVersion
        if offered < installed { throw MapStoreError.rollbackRefused(installed: installed, offered: offered) }
        try checkRegionIDsUnique(tree, of: catalog.id)
        let rows = try regionRows(of: catalog)
        let stored = try storedManifest()
        let onDevice = Set(try installedManifest(stored).bundles.map(\.digest))
        var supported: [RegionID] = []
        var unsupported: [RegionID] = []
        var changed: [RegionID] = []
        var wanted: [BundleDigest: [RegionID]] = [:]
        for row in rows {
            guard row.state != .unsupported, let region = tree.region(row.id) else {
                unsupported.append(row.id)
                continue
            }
            supported.append(row.id)
            if Set(region.bundles) != Set(row.bundles) { changed.append(row.id) }
            for bundle in region.bundles where !onDevice.contains(bundle) { wanted[bundle, default: []].append(row.id) }
        }
        let requests = try Self.fetchRequests(for: wanted, tree: tree, catalogURL: catalogURL)
        let window = offered == installed ? tree.catalog.supportedUntil : catalog.supportedUntil
        let expired = window.map { StoreCore.isPast($0, now: now) } ?? false
        let status: UpdateInfo.Status = expired ? .expiredData : (offered > installed ? .oldData : .upToDate)
        let info = UpdateInfo(
            catalog: catalog.id, status: status, installedVersion: installed, availableVersion: offered,
            updateBytes: requests.reduce(0) { $0 + $1.size }, bundlesToFetch: requests.count,
            changedRegions: changed, unsupportedRegions: unsupported, supportedUntil: window)
        return UpdatePlan(info: info, requests: requests, supported: supported, unsupported: unsupported, stored: stored)
    }

    /// True when today (UTC) is after the date of `isoDate` (`YYYY-MM-DD…`).
    /// Today comes from `UTCTime`, as every other time the store writes: a `DateFormatter` would load
    /// ICU's calendar data into the app for one comparison (issue 34).
    static func isPast(_ isoDate: String, now: Date) -> Bool {
        guard let today = UTCTime.format(now) else { return now > UTCTime.latest }
        return today.prefix(10) > isoDate.prefix(10)
    }

    /// Marks the installed regions of `catalog` after a check of it: `outdated` (newer version) or
    /// `needUpdate` (expired). Other catalogs' regions are not this check's.
    func markChecked(_ info: UpdateInfo, catalog: StoreCatalog) throws {
        let state = try committedState()
        var states: [RegionID: RegionState] = [:]
        for row in try regionRows(of: catalog) where row.state != .unsupported && row.state != .downloading {
            switch info.status {
            case .upToDate: if row.state == .outdated { states[row.id] = .completed }
            case .oldData: states[row.id] = .outdated
            case .expiredData: states[row.id] = .needUpdate
            }
        }
        try state.setStates(states)
    }

    /// Installs `tree`, a version of the store's `catalog`, from the fetched bundles (`archives`),
    /// atomically; the regions of other catalogs stay as they are (files, states, cache entries).
    func applyUpdate(
        tree: RegionTree, catalog: StoreCatalog, catalogURL: URL, catalogBytes: Data, archives: [BundleDigest: String]
    ) throws -> ImageManifest {
        // Judged again under the lock: another writer may have moved the catalog on meanwhile.
        let catalog = try storeCatalog(catalog.id)
        let plan = try planUpdate(tree: tree, catalog: catalog, catalogURL: catalogURL)
        let old = try installedManifest(storedManifest())
        let needed = try bundlesToInstall(for: plan.supported, tree: tree, old: old, archives: archives)
        let others = Set(try committedState().regions(bundles: false).map(\.id)).subtracting(plan.supported + plan.unsupported)
        let otherRows = try committedState().regions().filter { others.contains($0.id) }
        let versionChanges = catalog.mapVersion != tree.catalog.mapVersion
        // Entries of other catalogs' regions (installed or offered) are not this update's to drop.
        let cacheKeeps = versionChanges ? unchangedRegions(from: old, to: tree, catalog: catalog).union(try otherCatalogsRegions(than: catalog)) : []
        let manifest = try transition(kind: "update", regions: plan.supported) { store in
            // The files that stay: bundles the new version's regions still use, the dropped regions' own, and other catalogs'.
            let staying = Set(
                plan.supported.flatMap { tree.region($0)?.bundles ?? [] } + plan.unsupported.flatMap { old.region($0)?.bundles ?? [] }
                    + otherRows.flatMap(\.bundles))
            var owners = ownership(keeping: staying, of: old, tree: tree)
            let extracted = try extractBundles(needed, tree: tree, archives: archives, into: store, ownership: &owners)
            let manifest = synthesizeManifest(
                old: old, tree: tree, regions: plan.supported, kept: plan.unsupported + otherRows.map(\.id), extracted: extracted,
                ofImageCatalog: catalog.isImageCatalog)
            var states: [RegionID: RegionState] = [:]
            for row in otherRows { states[row.id] = row.state }
            for id in plan.supported { states[id] = .completed }
            for id in plan.unsupported { states[id] = .unsupported }
            let meta: [StateMetaKey: String] =
                catalog.isImageCatalog
                ? [
                    .installedCatalogURL: catalogURL.absoluteString,
                    .checkedCatalogURL: catalogURL.absoluteString,
                    .supportedUntil: tree.catalog.supportedUntil ?? "",
                ] : [:]
            let commit =
                catalog.isImageCatalog
                ? nil
                : CatalogCommit(
                    catalog: catalog.id.rawValue, regions: (plan.supported + plan.unsupported).map(\.rawValue),
                    mapVersion: tree.catalog.mapVersion.rawValue, url: catalogURL.absoluteString, supportedUntil: tree.catalog.supportedUntil)
            return TransitionTarget(
                kind: "update", manifest: manifest, archives: archives.filter { needed[$0.key] != nil },
                infos: [:], states: states, meta: meta, resetsCache: versionChanges, cacheKeeps: cacheKeeps, catalog: commit)
        }
        // After the commit: a kept catalog that cannot be written stays of the old version, which
        // `keptTree(of:)` then ignores (downloads read the catalog at its URL and keep it again).
        if catalog.isImageCatalog {
            do { try FileSystem.writeAtomically(catalogBytes, to: keptCatalogPath) } catch {}
        } else {
            do { try state?.keepAddedCatalog(catalog.id, url: catalogURL, tree: tree, bytes: catalogBytes) } catch {}
        }
        purgeDownloads(Set(needed.keys))
        return manifest
    }

    /// The regions of the store's catalogs other than `catalog`: those installed from them and those
    /// their kept copies offer.
    func otherCatalogsRegions(than catalog: StoreCatalog) throws -> Set<RegionID> {
        var out = Set(try installedRegionCatalogs().filter { $0.value != catalog.id }.keys)
        for other in try storeCatalogs() where other.id != catalog.id {
            for region in keptTree(of: other)?.regions ?? [] { out.insert(region.id) }
        }
        return out
    }

    /// The regions whose data an update from the installed version to `tree` leaves as it is: the same
    /// set of bundles (digests) in both, as the kept catalog of the installed version (or, for an
    /// installed region, the kept manifest `old`) and `tree` list them. Their map cache entries, the
    /// cache seed's among them, are the same bytes in both versions and survive the update.
    func unchangedRegions(from old: ImageManifest, to tree: RegionTree, catalog: StoreCatalog) -> Set<RegionID> {
        // What the cache records of its seeded regions first: a store installed from an image keeps
        // no catalog until it downloads, and the seed's overview is no installed region.
        var before: [RegionID: Set<BundleDigest>] = (try? caches.with { try $0.regionBundles() }) ?? [:]
        if let kept = keptTree(of: catalog) { for region in kept.regions { before[region.id] = Set(region.bundles) } }
        for region in old.regions { before[region.id] = Set(region.bundles) }
        var unchanged = Set<RegionID>()
        for region in tree.regions where before[region.id] == Set(region.bundles) { unchanged.insert(region.id) }
        return unchanged
    }

    /// Removes verified downloads of installed bundles (their files are in the store now). After a commit:
    /// one that cannot be removed is a spare verified copy, which `repair()` may restore from and the
    /// next purge or cancel removes; the commit stands.
    func purgeDownloads(_ bundles: Set<BundleDigest>) {
        let cache = DownloadCache(root: downloadFolder)
        for digest in bundles {
            do { try FileSystem.removeFile(cache.path(for: digest)) } catch {}
        }
    }

    /// The kept catalog when it is of the installed map version.
    func keptCatalog() -> RegionTree? {
        guard let tree = ListingCache.readCatalog(keptCatalogPath), let version = try? state?.mapVersion, tree.catalog.mapVersion == version
        else { return nil }
        return tree
    }

    /// Keeps `bytes`, the catalog at `url`, as the installed version's catalog with its support window, and
    /// `url` as the installed catalog (the kept catalog's bundle URLs are relative to it, so the two change
    /// together), when the versions agree; true when kept.
    @discardableResult
    func keepCatalog(_ tree: RegionTree, bytes: Data, url: URL) throws -> Bool {
        guard let state, let version = try state.mapVersion, tree.catalog.mapVersion == version else { return false }
        // Never another catalog's copy in the image catalog's place (without trusted keys nothing else
        // tells them apart), nor one offering a region id another catalog has.
        if let name = try state.meta(.catalogName), !name.isEmpty, name != tree.catalog.catalog { return false }
        try checkRegionIDsUnique(tree, of: try imageCatalogID())
        try FileSystem.writeAtomically(bytes, to: keptCatalogPath)
        try state.setMeta(.installedCatalogURL, url.absoluteString)
        try state.setMeta(.supportedUntil, tree.catalog.supportedUntil ?? "")
        return true
    }
}
