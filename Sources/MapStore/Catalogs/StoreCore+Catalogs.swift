import Foundation
import MapFormat
import MapIO

/// The store's catalogs: the image's first, then those added (`MapStore.addCatalog`); which catalog an
/// installed region came from; each catalog's kept copy; and the rule that no region id is offered by two.
extension StoreCore {
    /// The image catalog's id: the state's record of the kept manifest's catalog (read from the manifest in
    /// a store whose state does not record it).
    func imageCatalogID() throws -> CatalogID {
        let state = try committedState()
        if let name = try state.meta(.catalogName), !name.isEmpty { return CatalogID(name) }
        return CatalogID(try storedManifest().catalog)
    }

    /// Every catalog of the store, the image's first.
    func storeCatalogs() throws -> [StoreCatalog] {
        let state = try committedState()
        let image = StoreCatalog(
            id: try imageCatalogID(), isImageCatalog: true, url: catalogURL,
            checkedURL: catalogToCheck == catalogURL ? nil : catalogToCheck, mapVersion: try state.mapVersion,
            supportedUntil: try state.meta(.supportedUntil).flatMap { $0.isEmpty ? nil : $0 }, added: nil)
        return [image] + (try state.addedCatalogs()).map(Self.storeCatalog)
    }

    static func storeCatalog(_ row: AddedCatalogRow) -> StoreCatalog {
        StoreCatalog(
            id: row.id, isImageCatalog: false, url: row.url, checkedURL: row.checkedURL, mapVersion: row.mapVersion,
            supportedUntil: row.supportedUntil, added: row)
    }

    /// The catalog `id`; `unknownCatalog` when the store has none of that id.
    func storeCatalog(_ id: CatalogID) throws -> StoreCatalog {
        let all = try storeCatalogs()
        guard let found = all.first(where: { $0.id == id }) else {
            throw MapStoreError.unknownCatalog(catalog: id.rawValue, url: nil, catalogs: all.map(\.id.rawValue))
        }
        return found
    }

    /// The catalog whose check or update `url` is, when the app names no catalog: the added catalog with
    /// that URL (or last checked there), else the image's. The catalog the URL serves decides in the end
    /// (`catalogServed`); this one only chooses whose trust records judge it.
    func catalogForURL(_ url: URL?) throws -> StoreCatalog {
        let all = try storeCatalogs()
        if let url, let added = all.first(where: { !$0.isImageCatalog && ($0.url == url || $0.checkedURL == url) }) { return added }
        return all[0]
    }

    /// The catalog `tree` (fetched from `url`) is, by its id, among the store's: the one expected when
    /// ids agree; `unknownCatalog` when the store has no catalog of that id (add it first), so that a
    /// URL of another catalog never replaces the regions of one the store has.
    func catalogServed(_ tree: RegionTree, url: URL, expected: StoreCatalog) throws -> StoreCatalog {
        let id = CatalogID(tree.catalog.catalog)
        if id == expected.id { return expected }
        let all = try storeCatalogs()
        if let found = all.first(where: { $0.id == id }) { return found }
        throw MapStoreError.unknownCatalog(catalog: id.rawValue, url: url, catalogs: all.map(\.id.rawValue))
    }

    /// The kept copy of `catalog` when it is of the version the device holds of it.
    func keptTree(of catalog: StoreCatalog) -> RegionTree? {
        guard let row = catalog.added else { return keptCatalog() }
        if let cached = addedTrees[row.id], cached.sha256 == row.sha256 {
            return cached.tree.catalog.mapVersion == row.mapVersion ? cached.tree : nil
        }
        guard let bytes = (try? state?.addedCatalogBytes(row.id)) ?? nil, let tree = try? CatalogLoader.tree(bytes, url: row.url)
        else { return nil }
        addedTrees[row.id] = (SHA256.hex(bytes), tree)
        return tree.catalog.mapVersion == row.mapVersion ? tree : nil
    }

    /// Keeps `bytes` (the catalog at `url`) as `catalog`'s copy when it is of the version the device holds
    /// of it (see `keepCatalog`); true when kept.
    @discardableResult
    func keep(_ tree: RegionTree, bytes: Data, url: URL, as catalog: StoreCatalog) throws -> Bool {
        guard let row = catalog.added else { return try keepCatalog(tree, bytes: bytes, url: url) }
        guard tree.catalog.mapVersion == row.mapVersion, let state else { return false }
        try checkRegionIDsUnique(tree, of: catalog.id)
        try state.keepAddedCatalog(row.id, url: url, tree: tree, bytes: bytes)
        return true
    }

    /// The catalog of each installed region: its added catalog's row, else the image's.
    func installedRegionCatalogs() throws -> [RegionID: CatalogID] {
        let state = try committedState()
        let image = try imageCatalogID()
        let added = try state.regionCatalogs()
        var out: [RegionID: CatalogID] = [:]
        for row in try state.regions(bundles: false) { out[row.id] = added[row.id] ?? image }
        return out
    }

    /// The installed region rows of `catalog`.
    func regionRows(of catalog: StoreCatalog, bundles: Bool = true) throws -> [StoredRegion] {
        let state = try committedState()
        let added = try state.regionCatalogs()
        return try state.regions(bundles: bundles).filter { row in
            guard let owner = added[row.id] else { return catalog.isImageCatalog }
            return owner == catalog.id
        }
    }

    /// The installed regions `tree`, a catalog being added, takes back: those no added catalog has, that
    /// the image's kept catalog does not offer, and whose installed data `tree` offers unchanged (the same
    /// bundles). After a lost state database these are the regions of the catalogs it named
    /// (`RepairReport.Action.regionsOfForgottenCatalogs`). Empty when the image's catalog is not kept.
    func adoptableRegions(_ tree: RegionTree) throws -> [RegionID] {
        guard let image = keptCatalog() else { return [] }
        let state = try committedState()
        let owned = try state.regionCatalogs()
        return try state.regions().filter { row in
            guard owned[row.id] == nil, image.region(row.id) == nil, let offered = tree.region(row.id) else { return false }
            return Set(offered.bundles) == Set(row.bundles)
        }.map(\.id)
    }

    /// Refuses `tree` as the catalog `id` when one of its region ids is another catalog's (offered by its
    /// kept copy, or installed from it): a region is addressed by its id alone, so two catalogs may not
    /// both have one (`catalogRegionClash`, naming both). `adopting`: installed regions it takes back
    /// (`adoptableRegions`).
    func checkRegionIDsUnique(_ tree: RegionTree, of id: CatalogID, adopting: Set<RegionID> = []) throws {
        let offered = Set(tree.regions.map(\.id))
        let owners = try installedRegionCatalogs()
        for (region, owner) in owners.sorted(by: { $0.key < $1.key })
        where owner != id && offered.contains(region) && !adopting.contains(region) {
            throw MapStoreError.catalogRegionClash(region: region, catalogs: [owner.rawValue, id.rawValue])
        }
        for other in try storeCatalogs() where other.id != id {
            guard let kept = keptTree(of: other) else { continue }
            if let region = kept.regions.map(\.id).sorted().first(where: offered.contains) {
                throw MapStoreError.catalogRegionClash(region: region, catalogs: [other.id.rawValue, id.rawValue])
            }
        }
    }

    /// The catalog offering `ids` for a download: `named` when given (each id must be in it), else the
    /// catalog whose kept copy has the first id. `unknownCatalogRegion` when none has it, and a refusal
    /// when the ids are of two catalogs (a download is from one catalog).
    func downloadCatalog(for ids: [RegionID], named: CatalogID?) throws -> StoreCatalog {
        let all = try storeCatalogs()
        if let named {
            guard let found = all.first(where: { $0.id == named }) else {
                throw MapStoreError.unknownCatalog(catalog: named.rawValue, url: nil, catalogs: all.map(\.id.rawValue))
            }
            return found
        }
        var chosen: StoreCatalog?
        for id in ids {
            let owner = all.first { keptTree(of: $0)?.region(id) != nil }
            guard let owner else { continue }
            if let chosen, chosen.id != owner.id {
                throw MapStoreError.regionsOfSeveralCatalogs(regions: ids, catalogs: [chosen.id.rawValue, owner.id.rawValue])
            }
            chosen = owner
        }
        return chosen ?? all[0]
    }
}

extension StoreCore {
    /// Remembers `url` as the catalog the next check or update of `catalog` reads.
    func rememberChecked(_ url: URL, of catalog: StoreCatalog) throws {
        let state = try committedState()
        if catalog.isImageCatalog {
            try state.setMeta(.checkedCatalogURL, url.absoluteString)
        } else {
            try state.setAddedCheckedURL(catalog.id, url)
        }
    }

    /// Where `repair()` fetches bundle `digest` again: its URL in the kept copy of the catalog that lists
    /// it, with that catalog's URL to resolve it against; else `fallback` (the kept manifest's URL)
    /// against the image catalog's.
    func bundleLocation(_ digest: BundleDigest, fallback: String) -> (relative: String, base: URL?) {
        for catalog in (try? storeCatalogs()) ?? [] {
            if let info = keptTree(of: catalog)?.catalog.bundles[digest] { return (info.url, catalog.url) }
        }
        return (fallback, catalogURL)
    }
}
