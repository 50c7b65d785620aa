import Foundation

/// One region of the demo world as it goes into `source.json`.
struct DemoRegion: Sendable {
    /// Catalog id, e.g. `europe/fr/ara/01`.
    let id: String
    /// Parent id; nil at the roots (`world` and the continents).
    let parent: String?
    /// Names keyed by language code; always holds `en`.
    let names: [String: String]
    /// Child ids, sorted.
    var children: [String] = []
    /// Centre `[lat, lon]`; synthetic below the continents (see `WorldTree`).
    var center: [Double]?
    /// Bounding box `[west, south, east, north]`; synthetic below the continents.
    var bbox: [Double]?
    /// A few city names (synthetic, deterministic from the seed and the id).
    var cities: [String]?
    /// Names of the bundle folders this region lists.
    var bundles: [String] = []

    /// True for a region that carries payload bundles: no children, and not the `world` root.
    var isLeaf: Bool { children.isEmpty && id != WorldTree.worldID }

    /// The id with `/` turned into `.`, the stem of this region's bundle names.
    var bundleStem: String { id.replacingOccurrences(of: "/", with: ".") }
}
