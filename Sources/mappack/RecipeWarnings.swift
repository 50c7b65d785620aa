import MapBuild
import MapFormat

/// What in a recipe is allowed but probably not meant, said as warnings by `plan` and `build`.
enum RecipeWarnings {
    /// Each `exclude` whose region lies outside every include (neither inside one nor holding one):
    /// it removes nothing, so it is likely a typo or a leftover.
    static func excludesOutsideIncludes(recipe: Recipe, tree: RegionTree) -> [String] {
        guard !recipe.exclude.isEmpty else { return [] }
        // The region each selector names (the first of its subtree, in tree order); resolution
        // errors were reported by the plan already.
        func region(_ selector: RegionSelector) -> RegionID? { try? tree.resolve(include: [selector], exclude: []).regions.first?.id }
        let includes = recipe.include.compactMap(region)
        return recipe.exclude.compactMap { selector -> String? in
            guard let excluded = region(selector) else { return nil }
            let ancestry = Set(tree.ancestry(excluded))
            let related = includes.contains { include in ancestry.contains(include) || tree.ancestry(include).contains(excluded) }
            guard !related else { return nil }
            let place = selector.location ?? recipe.file
            let names = recipe.include.map(\.text).joined(separator: ", ")
            let named = selector.text == excluded.rawValue ? "'\(excluded)'" : "'\(selector.text)' (\(excluded))"
            return "\(place): exclude \(named) is outside every include (\(names)), so it removes nothing; remove it or correct it"
        }
    }
}
