import MapFormat

/// The overviews of an import: each region with children, and each root (a region without a
/// parent, even a childless one), gets a bundle `<id with dots>.overview` (kind `overview`, which a
/// build's cache seed takes first when its space is short) holding `overview/<id>/tiles.db`: the
/// tiles of zooms 0…`maxZoom` that meet the region's polygon (the test tile placement uses), listed
/// by that region alone. Shards write the pieces their runs of tiles hold, which the merge joins.
///
/// The tiles stay in the deepest regions' bundles too: a device that installs one of them without
/// the parent still shows its low zooms. A childless root's `tiles.db` holds every zoom, but a seed
/// short of space would skip that whole file; its overview's low zooms fit. The files live under
/// `overview/`, apart from `regions/` and `shared/`, so no two bundles give the same store path.
struct ImportOverview {
    /// The highest zoom an overview holds.
    let maxZoom: Int
    /// Whether each region (by position) gets an overview: it has children or no parent.
    let regions: [Bool]

    /// The overviews `zooms` asks for of a tileset whose zooms end at `tilesetMaxZoom`, or nil when
    /// there are none to write.
    init?(zooms: OverviewZooms, tilesetMaxZoom: Int?, layout: ImportLayout) throws(ImportError) {
        guard let maxZoom = try zooms.maxZoom(tilesetMaxZoom: tilesetMaxZoom) else { return nil }
        let parents = Set(layout.regions.compactMap(\.parent))
        let regions = layout.regions.map { $0.parent == nil || parents.contains($0.id) }
        guard regions.contains(true) else { return nil }
        self.maxZoom = maxZoom
        self.regions = regions
    }

    /// The regions (positions) among `hits` whose overviews hold a tile of `zoom` that meets them.
    func holders(of hits: [Int], zoom: Int64) -> [Int] {
        guard zoom <= Int64(maxZoom) else { return [] }
        return hits.filter { regions[$0] }
    }

    /// A region's overview tiles in the first pass's scratch table: negative numbers, apart from the
    /// destinations of the regions' own and shared tiles (0, 1, …).
    static func destination(of region: Int) -> Int { -1 - region }

    /// The bundle of a region's overview.
    static func bundle(for region: ImportRegion) -> ImportLayout.Bundle {
        ImportLayout.Bundle(
            name: ImportLayout.stem(region.id) + ".overview", kind: TileImporter.Kind.overview, file: "overview/\(region.id)/tiles.db")
    }
}
