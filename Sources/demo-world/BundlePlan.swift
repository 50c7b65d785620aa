/// One bundle folder to write: its name, its kind and what goes in it.
struct BundlePlan: Sendable {
    /// What a bundle holds, with everything that seeds its bytes.
    enum Content: Sendable {
        /// `overview/world/…`: low-zoom tiles of the whole world, a style and an empty notices file.
        case worldOverview
        /// `regions/<R>/overview.db` of a region with children.
        case regionOverview(region: String, area: TileArea)
        /// `regions/<R>/tiles.db` of a leaf, seeded by `version` (the map or the base version), then
        /// partly rewritten by `edit` when there is one.
        case tiles(region: String, version: String, large: Bool, area: TileArea, edit: Edit?)
        /// `regions/<R>/search.db` of a leaf, seeded by `version`, then partly rewritten by `edit`.
        case search(region: String, version: String, names: [String: String], cities: [String], center: [Double], edit: Edit?)
        /// `regions/<R>/routing/<a>/<b>/<n>.rt` of a leaf; never changes between versions.
        case routing(region: String)
        /// `borders/<parent>/<a>-<b>/tiles.db`, listed by both regions `a` and `b`.
        case border(folder: String)
    }

    /// `--edit-fraction`: a changed file keeps the base version's layout and sizes and has about
    /// `fraction` of its records (tiles, places) rewritten, chosen by a stream seeded by `version`.
    struct Edit: Sendable {
        /// The map version whose edits these are (seeds which records change and their new bytes).
        let version: String
        /// Share of records rewritten, in `(0, 1]`.
        let fraction: Double
    }

    /// The area a region's tiles cover: its bounding box in degrees (Web Mercator tiles over it,
    /// zoom after zoom, until the bundle's byte budget is spent).
    struct TileArea: Sendable {
        let west: Double
        let south: Double
        let east: Double
        let north: Double
    }

    /// Folder name under `bundles/` (and the name `source.json` lists); never contains `/`.
    let name: String
    /// `kind` in `source.json`: overview, tiles, search, routing or border.
    let kind: String
    /// What to write.
    let content: Content
}
