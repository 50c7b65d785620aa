import Foundation
import MapFetch
import MapFormat
import MapIO

/// Run-time region downloads from the store's catalog: plan and atomic install beside what is there.
extension StoreCore {
    struct DownloadPlan {
        /// Regions (with descendants) not installed yet.
        var newRegions: [RegionID]
        /// Bundles to fetch.
        var requests: [FetchRequest]
        /// Per requested region: its missing bundles.
        var regionBundles: [RegionID: Set<BundleDigest>]
    }

    /// What downloading `ids` (and their descendants) from `tree`, the store's `catalog`, would fetch and install.
    func planDownload(tree: RegionTree, catalog: StoreCatalog, ids: [RegionID], catalogURL: URL) throws -> DownloadPlan {
        let state = try committedState()
        guard let version = catalog.mapVersion else { throw MapStoreError.notInstalled }
        let rows = try state.regions()
        return try Self.planDownload(
            tree: tree, ids: ids, catalogURL: catalogURL, installedVersion: version, installed: Set(rows.map(\.id)),
            onDevice: Set(rows.flatMap(\.bundles)))
    }

    /// The plan for `ids` against a store of `installedVersion` holding the regions `installed` and the
    /// bundles `onDevice`; throws `updateRequired` when `tree` is of another version.
    static func planDownload(
        tree: RegionTree, ids: [RegionID], catalogURL: URL, installedVersion version: MapVersion, installed: Set<RegionID>,
        onDevice: Set<BundleDigest>
    ) throws -> DownloadPlan {
        guard tree.catalog.mapVersion == version else { throw MapStoreError.updateRequired(store: version, catalog: tree.catalog.mapVersion) }
        var newRegions: [RegionID] = []
        var seen = Set<RegionID>()
        var wanted: [BundleDigest: [RegionID]] = [:]
        var regionBundles: [RegionID: Set<BundleDigest>] = [:]
        for id in ids {
            guard tree.region(id) != nil else { throw MapStoreError.unknownCatalogRegion(id) }
            var missing = Set<BundleDigest>()
            for member in tree.subtree(id) where !installed.contains(member) {
                if seen.insert(member).inserted { newRegions.append(member) }
                for bundle in tree.region(member)?.bundles ?? [] where !onDevice.contains(bundle) {
                    missing.insert(bundle)
                    if !(wanted[bundle]?.contains(id) ?? false) { wanted[bundle, default: []].append(id) }
                }
            }
            regionBundles[id] = missing
        }
        let requests = try fetchRequests(for: wanted, tree: tree, catalogURL: catalogURL)
        return DownloadPlan(newRegions: newRegions, requests: requests, regionBundles: regionBundles)
    }

    /// Installs `ids` (not yet installed ones, with descendants) from the fetched `archives`, atomically.
    func applyDownload(tree: RegionTree, catalog: StoreCatalog, ids: [RegionID], catalogURL: URL, archives: [BundleDigest: String]) throws {
        // Judged again under the lock: the catalog's version or its copy may have moved on meanwhile.
        let catalog = try storeCatalog(catalog.id)
        let plan = try planDownload(tree: tree, catalog: catalog, ids: ids, catalogURL: catalogURL)
        guard !plan.newRegions.isEmpty, let state else { return }
        let rows = try state.regions()
        let old = try installedManifest(storedManifest())
        let needed = try bundlesToInstall(for: plan.newRegions, tree: tree, old: old, archives: archives)
        _ = try transition(kind: "download", regions: ids) { store in
            var owners = ownership(keeping: Set(old.bundles.map(\.digest)), of: old, tree: tree)
            let extracted = try extractBundles(needed, tree: tree, archives: archives, into: store, ownership: &owners)
            // Installed regions keep their records (and their data's version); new ones come from the catalog.
            let manifest = synthesizeManifest(
                old: old, tree: tree, regions: plan.newRegions, kept: rows.map(\.id), extracted: extracted, ofImageCatalog: catalog.isImageCatalog)
            var states: [RegionID: RegionState] = [:]
            for row in rows { states[row.id] = row.state }
            for id in plan.newRegions { states[id] = .completed }
            return TransitionTarget(
                kind: "download", manifest: manifest, archives: archives.filter { needed[$0.key] != nil }, infos: [:],
                states: states, meta: [:], resetsCache: false,
                catalog: catalog.isImageCatalog ? nil : CatalogCommit(catalog: catalog.id.rawValue, regions: plan.newRegions.map(\.rawValue)))
        }
        purgeDownloads(Set(needed.keys))
    }

    /// Bytes of `digest` already on the device in the download cache (verified or partial).
    func downloadedBytes(_ digest: BundleDigest) -> Int64 {
        Self.downloadedBytes(digest, root: layout.root)
    }

    /// Bytes of `digest` the download cache of the storage `root` holds (verified or partial).
    static func downloadedBytes(_ digest: BundleDigest, root: String) -> Int64 {
        let cache = DownloadCache(root: root + "/" + StoreLayout.downloadsFolderName)
        if let size = (try? FileSystem.status(cache.path(for: digest))) ?? nil { return size.size }
        return ((try? FileSystem.status(cache.partialPath(for: digest))) ?? nil)?.size ?? 0
    }

    /// Removes verified and partial downloads of `bundles`.
    func removeDownloads(_ bundles: Set<BundleDigest>) throws {
        let cache = DownloadCache(root: downloadFolder)
        for digest in bundles {
            for path in [cache.path(for: digest), cache.partialPath(for: digest), cache.partialMetaPath(for: digest), cache.lockPath(for: digest)] {
                try FileSystem.removeFile(path)
            }
        }
    }
}
