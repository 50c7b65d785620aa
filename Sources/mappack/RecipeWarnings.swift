import MapBuild
import MapFormat

/// What in a recipe is allowed but probably not meant, said as warnings by `plan` and `build`.
enum RecipeWarnings {
    /// Each `exclude` whose region lies outside every include (neither inside one nor holding one):
    /// it removes nothing, so it is likely a typo or a leftover.
    static func excludesOutsideIncludes(recipe: Recipe, tree: RegionTree) -> [String] {
        // The region each selector names (the first of its subtree, in tree order); resolution
        // errors were reported by the plan already.
        excludesOutsideIncludes(
            recipe: recipe, region: { try? tree.resolve(include: [$0], exclude: []).regions.first?.id }, ancestry: tree.ancestry)
    }

    /// `excludesOutsideIncludes` for what `mappack plan` reads.
    static func excludesOutsideIncludes(recipe: Recipe, plan: PlanPreview) -> [String] {
        excludesOutsideIncludes(recipe: recipe, region: plan.firstRegion(of:), ancestry: plan.ancestry)
    }

    /// `region`: the region a selector names, nil when none; `ancestry`: a region's chain from its root.
    private static func excludesOutsideIncludes(
        recipe: Recipe, region: (RegionSelector) -> RegionID?, ancestry: (RegionID) -> [RegionID]
    ) -> [String] {
        guard !recipe.exclude.isEmpty else { return [] }
        let includes = recipe.include.compactMap(region)
        return recipe.exclude.compactMap { selector -> String? in
            guard let excluded = region(selector) else { return nil }
            let chain = Set(ancestry(excluded))
            let related = includes.contains { include in chain.contains(include) || ancestry(include).contains(excluded) }
            guard !related else { return nil }
            let place = selector.location ?? recipe.file
            let names = recipe.include.map(\.text).joined(separator: ", ")
            let named = selector.text == excluded.rawValue ? "'\(excluded)'" : "'\(selector.text)' (\(excluded))"
            return "\(place): exclude \(named) is outside every include (\(names)), so it removes nothing; remove it or correct it"
        }
    }
}
