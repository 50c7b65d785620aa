/// How much of a catalog a read keeps: `CatalogReader` and `RegionTree` take it, and only
/// `CatalogOutline.read` asks for less than `full`, so a catalog with parts left out never leaves
/// this module as a `Catalog` or a `RegionTree`.
///
/// `mappack plan` prints each region's id and one name and each bundle's sizes; a build needs
/// everything. A `plan` read checks every value exactly as a `full` read does (a catalog one
/// refuses, the other refuses too) but keeps less, which is most of a planet plan's time.
enum CatalogDetail: Sendable, Equatable {
    /// Every field.
    case full
    /// A region keeps its id, parent and bundles, and of its names only those `name(in: language)`
    /// can pick (the language, its bases and English; or else one, so the names are never empty),
    /// or all of them with `allNames`; no center, bbox, cities or release time. A bundle keeps
    /// everything but its URL (`""`), which is checked as it is read (`RegionTree.urlIsPlainlySafe`,
    /// else `RegionTree`'s full rule). Without `allNames`, names cannot select regions: a selector
    /// that is not an id needs all names.
    case plan(language: String?, allNames: Bool = false)
}

extension LocalizedNames {
    /// The tags `pick` tries for `language`, in its order, English last.
    package static func candidates(language: String?) -> [String] {
        fallbacks(of: language) + ["en"]
    }

    /// `language` and each shorter tag it falls back to (BCP 47: `de-CH`, then `de`; `_` too).
    package static func fallbacks(of language: String?) -> [String] {
        var tags: [String] = []
        if var tag = language {
            while true {
                tags.append(tag)
                guard let dash = tag.lastIndex(where: { $0 == "-" || $0 == "_" }) else { break }
                tag = String(tag[..<dash])
            }
        }
        return tags
    }
}
