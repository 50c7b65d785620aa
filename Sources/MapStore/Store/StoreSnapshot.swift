import Foundation
import MapFormat

/// The installed state readers see: published by every write when it ends, read without waiting for
/// a write in progress (a reader copies a reference under a lock held only for that copy).
struct StoreSnapshot: Sendable {
    /// The storage folder.
    var root: String
    /// The folder readers resolve store paths in (`path(of:)`): the store tree of this snapshot's
    /// version. The live `store/` folder, except while a switch replaces it: then a hard-linked copy
    /// of the old tree, so the new files become visible only with the snapshot published after the commit.
    var storeFolder: String
    /// An in-place store's base store tree, where a path the storage's tree does not hold is read
    /// (`StoreCore+InPlace.swift`); nil for a store that copied its image.
    var baseStoreFolder: String?
    /// The committed map version and image id; nil when nothing is installed.
    var mapVersion: MapVersion?
    var imageID: String?
    /// The image's language (names fall back to it).
    var language: String?
    /// Installed region rows (without their bundle lists).
    var regions: [StoredRegion]
    /// True when an operation is pending (the store needs `repair()`); a write in progress is not
    /// seen here, since its snapshot is published when it ends.
    var pending: Bool = false
    /// States of regions being downloaded or paused (rows of the downloads table).
    var downloadStates: [RegionID: RegionState] = [:]
    /// The catalog the installed data comes from (downloads resolve against it).
    var catalogURL: URL?
    /// The catalog a check or an update reads when the app names none (`StoreCore.catalogToCheck`).
    var catalogToCheck: URL?
    /// The kept manifest's block size and catalog name as the state records them; nil in a store
    /// installed by a library that did not record them (`ListingCache.manifestFacts` reads the manifest).
    var blockSize: Int64?
    var catalogName: String?
    /// The image catalog's support window (`StateMetaKey.supportedUntil`), nil when it declares none.
    var supportedUntil: String?
    /// The catalogs added after the image's, in order, with their kept copies when of the version the
    /// device holds of them; and the added catalog of each region installed from one.
    var addedCatalogs: [AddedCatalogRow] = []
    var addedTrees: [CatalogID: RegionTree] = [:]
    var regionCatalogs: [RegionID: CatalogID] = [:]

    /// Every region's state: installed rows', else download rows' (absent: `available`).
    var states: [RegionID: RegionState] { StateDatabase.states(downloads: downloadStates, installed: regions) }

    /// Nothing installed at `root`.
    static func empty(root: String) -> StoreSnapshot {
        StoreSnapshot(root: root, storeFolder: StoreLayout(root: root).store, mapVersion: nil, imageID: nil, language: nil, regions: [])
    }

    /// Installed regions with names in `language` (BCP 47), by the rule offered regions follow too (`RegionName`).
    func installedRegions(language: String?) -> [InstalledRegion] {
        guard let mapVersion else { return [] }
        return regions.map { region in
            let name = RegionName.pick(names: region.names, language: language, imageLanguage: self.language, ownName: region.name, id: region.id)
            // A region of an added catalog has that catalog's version.
            let version = regionCatalogs[region.id].flatMap { id in addedCatalogs.first { $0.id == id }?.mapVersion } ?? mapVersion
            return InstalledRegion(
                id: region.id, parent: region.parent, name: name, sizeOnDiskInBytes: region.sizeOnDisk,
                state: region.state, mapVersion: version)
        }
    }
}
