import Foundation
import MapFormat
import MapIO

/// Several catalogs in one store (a world map beside a Japan map, each with its own version and
/// updates): listing, adding and removing them. The image's catalog is the first; each catalog's regions
/// are downloaded, checked and updated on their own, and a region id belongs to one catalog only.
extension MapStore {
    /// The store's catalogs, the image's first, then the added ones in the order they were added: id,
    /// URL, map version, installed regions and update state. Never waits for a write in progress.
    public func catalogs() throws(MapStoreError) -> [CatalogInfo] {
        try MapStoreError.boundary("catalogs", path: storageFolder) {
            let snapshot = try committedSnapshot()
            let entries = catalogsOf(snapshot)
            let imageID = entries[0].catalog.id
            return entries.map { entry in
                let rows = snapshot.regions.filter { (snapshot.regionCatalogs[$0.id] ?? imageID) == entry.catalog.id }
                let status: UpdateInfo.Status? =
                    rows.isEmpty
                    ? nil
                    : rows.contains { $0.state == .needUpdate } ? .expiredData : rows.contains { $0.state == .outdated } ? .oldData : .upToDate
                return CatalogInfo(
                    id: entry.catalog.id, isImageCatalog: entry.catalog.isImageCatalog, url: entry.catalog.url,
                    checkedURL: entry.catalog.toCheck, mapVersion: entry.catalog.mapVersion, supportedUntil: entry.catalog.supportedUntil,
                    installedRegions: rows.map(\.id), updateStatus: status)
            }
        }
    }

    /// Adds the catalog at `url` to the store, after the others: its regions are offered
    /// (`availableRegions(catalog:)`), downloaded, checked and updated on their own, at its own map
    /// version, and no other catalog's regions change. Its copy is kept in `state.sqlite` with its row,
    /// one commit. With trusted keys it must be signed, and the lineage it follows from then on is its own.
    ///
    /// Refused, changing nothing: a catalog the store has already (`catalogAlreadyAdded`; change its URL
    /// with `setCatalogURL`), and one that offers a region id another catalog has (`catalogRegionClash`,
    /// naming both). Installed regions the image's kept catalog does not offer and this one offers with
    /// the same data are taken back as its own: after a lost state database, the regions of the catalog
    /// it had named (`RepairReport.Action.regionsOfForgottenCatalogs`).
    @discardableResult
    public func addCatalog(url: URL) async throws(MapStoreError) -> CatalogInfo {
        let id = try await MapStoreError.boundary("addCatalog", path: storageFolder) { () async throws -> CatalogID in
            let lease = try await holdStorageOffPool()
            defer { lease.release() }
            let (tree, bytes, seen) = try await loadCatalog(url, trust: .new)
            let id = CatalogID(tree.catalog.catalog)
            try write { core throws in
                if try core.storeCatalogs().contains(where: { $0.id == id }) {
                    throw MapStoreError.catalogAlreadyAdded(catalog: id.rawValue, url: url)
                }
                // The regions of it a lost state database forgot are its again.
                let adopted = try core.adoptableRegions(tree)
                try core.checkRegionIDsUnique(tree, of: id, adopting: Set(adopted))
                try core.committedState().addCatalog(id, url: url, tree: tree, bytes: bytes, seen: seen, adopting: adopted)
            }
            return id
        }
        broadcaster.send(.availableRegionsChanged)
        let info = try catalogs().first { $0.id == id }
        guard let info else { throw MapStoreError.unknownCatalog(catalog: id.rawValue, url: url, catalogs: []) }
        return info
    }

    /// Removes the added catalog `id` (its row, kept copy and trust records; one commit). Refused with
    /// `catalogInUse` while any of its regions is installed, downloading or paused (delete them first with
    /// `deleteRegions`), and for the image's catalog, which a store always has.
    public func removeCatalog(_ id: CatalogID) async throws(MapStoreError) {
        try await MapStoreError.boundary("removeCatalog", path: storageFolder) {
            try await writeOffPool { core throws in
                let catalog = try core.storeCatalog(id)
                let state = try core.committedState()
                guard !catalog.isImageCatalog else { throw MapStoreError.catalogInUse(catalog: id.rawValue, regions: []) }
                var held = try core.regionRows(of: catalog, bundles: false).map(\.id)
                if let tree = core.keptTree(of: catalog) {
                    held += try state.downloadStates().keys.filter { tree.region($0) != nil }.sorted()
                }
                guard held.isEmpty else { throw MapStoreError.catalogInUse(catalog: id.rawValue, regions: held) }
                try state.removeAddedCatalog(id)
                core.addedTrees[id] = nil
            }
        }
        broadcaster.send(.availableRegionsChanged)
    }

    /// The store's catalogs as `snapshot` has them, the image's first, each with its kept copy when that
    /// is of the version the device holds of it.
    func catalogsOf(_ snapshot: StoreSnapshot) -> [(catalog: StoreCatalog, tree: RegionTree?)] {
        let name = snapshot.catalogName ?? ((try? listings.manifestFacts(snapshot).catalog) ?? "")
        let image = StoreCatalog(
            id: CatalogID(name), isImageCatalog: true, url: snapshot.catalogURL,
            checkedURL: snapshot.catalogToCheck == snapshot.catalogURL ? nil : snapshot.catalogToCheck, mapVersion: snapshot.mapVersion,
            supportedUntil: snapshot.supportedUntil, added: nil)
        return [(image, listings.keptCatalog(snapshot))] + snapshot.addedCatalogs.map { (StoreCore.storeCatalog($0), snapshot.addedTrees[$0.id]) }
    }

    /// The kept copy among `catalogs` that offers region `id`.
    func offering(_ id: RegionID, in catalogs: [(catalog: StoreCatalog, tree: RegionTree?)]) -> RegionTree? {
        catalogs.lazy.compactMap(\.tree).first { $0.region(id) != nil }
    }
}
