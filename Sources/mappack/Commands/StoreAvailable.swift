import Foundation
import MapBuild
import MapFormat
import MapIO
import MapStore

/// `mappack store available`: the catalog's regions a store does not hold, or, when there are none
/// to list, why. A catalog of another map version than the store's offers nothing to download
/// into it; its regions are listed as what an update would make available.
struct StoreAvailable {
    struct Row {
        let id: RegionID
        let name: String
        let downloadBytes: Int64
        let state: String
        /// The store's catalog offering it (nil: a catalog read from its URL, not one of the store's).
        var catalog: String? = nil
    }

    let rows: [Row]
    /// The store's map version and the catalog's (nil when no catalog is known).
    let storeVersion: MapVersion?
    let catalogVersion: MapVersion?
    let catalog: String?
    /// Why the list is empty or not downloadable as it is; nil when it is.
    let note: String?

    /// `check` fetches a catalog through the store, which refuses it as any catalog it loads (with
    /// trusted keys: unsigned, rolled back, …); it has been done already for a `given` one.
    init(store: MapStore, catalog given: URL?, language: String?, storage: String, cache: String, check: (URL) async throws -> Void) async throws {
        storeVersion = store.mapVersion
        let url = given ?? store.catalogURL
        catalog = url.map { $0.shown }
        let offered = try store.availableRegions(language: language)
        if !offered.isEmpty {
            rows = offered.map {
                Row(id: $0.id, name: $0.name, downloadBytes: $0.downloadSizeInBytes, state: $0.state.rawValue, catalog: $0.catalog?.rawValue)
            }
            catalogVersion = offered.first?.mapVersion
            note = nil
            return
        }
        guard let url, let catalog else { throw MapStoreError.noCatalogURL }
        if given == nil { try await check(url) }
        let tree = try CatalogSource.load(url)
        catalogVersion = tree.catalog.mapVersion
        let installed = Set(try store.regions().map(\.id))
        let missing = tree.regions.map(\.id).filter { !installed.contains($0) }.sorted()
        if let storeVersion, tree.catalog.mapVersion != storeVersion {
            rows = missing.map { id in
                Row(
                    id: id, name: tree.region(id)?.name(in: language) ?? id.rawValue, downloadBytes: tree.downloadSize(tree.subtreeBundles(id)),
                    state: "afterUpdate")
            }
            note =
                "the catalog \(catalog) is map version \(tree.catalog.mapVersion) and this store holds \(storeVersion); a store downloads "
                + "regions of its own version only. To get these, update first: mappack store update --catalog \(catalog) --storage \(storage) --cache \(cache)"
        } else {
            rows = []
            note =
                storeVersion == nil
                ? "nothing is installed in this store: install an image first (mappack store install --image IMAGE)"
                : "every region of the catalog \(catalog) (map version \(tree.catalog.mapVersion)) is installed"
        }
    }

    /// The regions `rows` the store's catalog `id` offers (`availableRegions(catalog:)`).
    init(catalog id: CatalogID, rows offered: [RegionDetails], storeVersion: MapVersion?) {
        self.storeVersion = storeVersion
        rows = offered.map {
            Row(id: $0.id, name: $0.name, downloadBytes: $0.downloadSizeInBytes, state: $0.state.rawValue, catalog: $0.catalog?.rawValue)
        }
        catalogVersion = offered.first?.mapVersion
        catalog = id.rawValue
        note = offered.isEmpty ? "every region of the catalog \(id) is installed, or none of its version is kept" : nil
    }

    func print(to terminal: Terminal) {
        if terminal.json {
            terminal.record(
                StoreAvailableRecord(
                    storeMapVersion: storeVersion?.rawValue, catalogMapVersion: catalogVersion?.rawValue, catalog: catalog, note: note,
                    regions: rows.map {
                        StoreAvailableRecord.Region(
                            id: $0.id.rawValue, name: $0.name, downloadBytes: $0.downloadBytes, state: $0.state, catalog: $0.catalog)
                    }))
            return
        }
        if let note { terminal.note(note) }
        guard !rows.isEmpty else { return }
        // A column for the catalog once the regions on offer are of several (`mappack store catalogs`).
        let several = Set(rows.map(\.catalog)).count > 1
        var table = TextTable(
            [("REGION", .left), ("NAME", .left), ("DOWNLOAD", .right), ("STATE", .left)] + (several ? [("CATALOG", .left)] : []))
        for row in rows {
            table.add([row.id.rawValue, row.name, ByteCount.format(row.downloadBytes), row.state] + (several ? [row.catalog ?? "-"] : []))
        }
        terminal.line(table.text)
    }
}
