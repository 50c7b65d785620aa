/// A region selector as a user writes it: an id or an exact localized name.
public struct RegionSelector: Sendable, Equatable {
    /// The text as written.
    public let text: String
    /// Where it was written (`recipe.yaml:7`), for messages.
    public let location: String?
    /// Wraps a selector.
    public init(_ text: String, location: String? = nil) {
        self.text = text
        self.location = location
    }
}

/// Why a selection could not be resolved.
public enum ResolutionError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownRegion(RegionSelector, suggestions: [RegionID])
    case ambiguousName(RegionSelector, matches: [RegionID])

    public var description: String {
        switch self {
        case .unknownRegion(let selector, let suggestions):
            let hint =
                suggestions.isEmpty
                ? "; run `mappack regions CATALOG` to list the ids"
                : "; did you mean \(suggestions.map { "'\($0)'" }.joined(separator: ", "))?"
            return "\(selector.location.map { "\($0): " } ?? "")unknown region '\(selector.text)'\(hint)"
        case .ambiguousName(let selector, let matches):
            return
                "\(selector.location.map { "\($0): " } ?? "")region name '\(selector.text)' matches several regions: \(matches.map(\.rawValue).joined(separator: ", ")); write the id instead"
        }
    }
}

/// The outcome of resolving includes and excludes.
public struct RegionSelection: Sendable, Equatable {
    /// Selected regions in tree order (parents before children), each with the include that brought it in.
    public let regions: [(id: RegionID, broughtBy: RegionID)]
    /// Bundles the selection needs, each once, sorted.
    public let bundles: [BundleDigest]
    /// The positions of `regions` in the tree's catalog, in the same order.
    package let regionPositions: [Int32]
    /// The tree's numbers of `bundles`, in the same (ascending) order.
    package let bundleNumbers: [Int32]

    /// Nothing selected.
    public static let empty = RegionSelection(regions: [], bundles: [], regionPositions: [], bundleNumbers: [])

    public static func == (lhs: RegionSelection, rhs: RegionSelection) -> Bool {
        lhs.bundles == rhs.bundles && lhs.regions.map(\.id) == rhs.regions.map(\.id) && lhs.regions.map(\.broughtBy) == rhs.regions.map(\.broughtBy)
    }
}

extension RegionTree {
    /// Finds the one region `selector` names: an id first, then an exact localized name in any language.
    public func lookup(_ selector: RegionSelector) throws(ResolutionError) -> RegionID {
        try lookupRegion(selector).id
    }

    /// `lookup`, with the region's position; the id is the selector's own spelling when it names an id.
    private func lookupRegion(_ selector: RegionSelector, near: [RegionID] = []) throws(ResolutionError) -> (position: Int32, id: RegionID) {
        let id = RegionID(selector.text)
        if let position = position(of: id) { return (position, id) }
        let matches = catalog.regions.indices.filter { catalog.regions[$0].names.values.contains(selector.text) }
            .sorted { catalog.regions[$0].id < catalog.regions[$1].id }
        if matches.count == 1 { return (Int32(matches[0]), catalog.regions[matches[0]].id) }
        if matches.count > 1 { throw .ambiguousName(selector, matches: matches.map { catalog.regions[$0].id }) }
        throw .unknownRegion(selector, suggestions: suggestions(for: selector.text, near: near))
    }

    /// Up to three ids (or ids of names) closest to `text` by edit distance; among equally close
    /// ones, those nearest in the tree to `near` (the regions the other selectors name) first.
    public func suggestions(for text: String, near: [RegionID] = []) -> [RegionID] {
        let needle = Array(text.lowercased().unicodeScalars)
        var scored: [(Int, RegionID)] = []
        for region in regions {
            var best = EditDistance.between(needle, Array(region.id.rawValue.lowercased().unicodeScalars))
            // Compare with the last id component too, so `swiss` finds `europe/ch` by name and `ch` finds `europe/ch`.
            if let last = region.id.rawValue.split(separator: "/").last {
                best = min(best, EditDistance.between(needle, Array(last.lowercased().unicodeScalars)))
            }
            for name in region.names.values { best = min(best, EditDistance.between(needle, Array(name.lowercased().unicodeScalars))) }
            scored.append((best, region.id))
        }
        let limit = max(2, needle.count / 3)
        let nearParts = near.map { $0.rawValue.split(separator: "/") }
        // How many leading id parts a candidate shares with the nearest of `near`.
        func closeness(_ id: RegionID) -> Int {
            let parts = id.rawValue.split(separator: "/")
            return nearParts.map { other in zip(parts, other).prefix { $0 == $1 }.count }.max() ?? 0
        }
        let ranked: [(distance: Int, closeness: Int, id: RegionID)] = scored.filter { $0.0 <= limit }.map { ($0.0, closeness($0.1), $0.1) }
        let sorted = ranked.sorted { a, b in
            if a.distance != b.distance { return a.distance < b.distance }
            if a.closeness != b.closeness { return a.closeness > b.closeness }
            return a.id < b.id
        }
        return sorted.prefix(3).map(\.id)
    }

    /// Resolves includes (each with its subtree) minus excludes (each with its subtree).
    public func resolve(include: [RegionSelector], exclude: [RegionSelector]) throws(ResolutionError) -> RegionSelection {
        let regions = catalog.regions
        // The regions the selectors that do resolve name: a typo's suggestions near them rank first.
        var named: [RegionID] { (include + exclude).compactMap { try? self.lookupRegion($0).id } }
        func lookupRegion(_ selector: RegionSelector) throws(ResolutionError) -> (position: Int32, id: RegionID) {
            do { return try self.lookupRegion(selector) } catch {
                guard case .unknownRegion = error else { throw error }
                return try self.lookupRegion(selector, near: named)
            }
        }
        var excluded = [Bool](repeating: false, count: regions.count)
        for selector in exclude {
            for position in subtreePositions(try lookupRegion(selector).position) { excluded[Int(position)] = true }
        }
        // Which include (an index into `includes`) brought each region in; -1 for regions not chosen.
        var includes: [RegionID] = []
        var broughtBy = [Int32](repeating: -1, count: regions.count)
        for selector in include {
            let root = try lookupRegion(selector)
            includes.append(root.id)
            for position in subtreePositions(root.position) where !excluded[Int(position)] && broughtBy[Int(position)] < 0 {
                broughtBy[Int(position)] = Int32(includes.count - 1)
            }
        }
        // Tree order (a depth-first walk with sorted children, the same as sorting by ancestry
        // path), so parents precede children and output is stable.
        var chosen: [Int32] = []
        var stack = Array(rootPositions.reversed())
        while let next = stack.popLast() {
            if broughtBy[Int(next)] >= 0 { chosen.append(next) }
            stack.append(contentsOf: childPositions(of: next).reversed())
        }
        // Bundle numbers ascend with digests, so marking and collecting them yields sorted digests.
        var needed = [Bool](repeating: false, count: bundleDigests.count)
        for position in chosen {
            for number in bundleNumbers(of: position) { needed[Int(number)] = true }
        }
        let numbers = needed.indices.filter { needed[$0] }.map(Int32.init)
        return RegionSelection(
            regions: chosen.map { (regions[Int($0)].id, includes[Int(broughtBy[Int($0)])]) },
            bundles: numbers.map { bundleDigests[Int($0)] }, regionPositions: chosen, bundleNumbers: numbers)
    }
}

/// Edit distance for "did you mean" hints: insertions, deletions, substitutions and swaps of two
/// neighbouring characters (`Wein` is one edit from `Wien`), each costing one (optimal string
/// alignment).
public enum EditDistance {
    /// The number of single-character edits (a swap of neighbours is one) between `a` and `b`.
    public static func between<T: Equatable>(_ a: [T], _ b: [T]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var beforePrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { current[j] = min(current[j], beforePrevious[j - 2] + 1) }
            }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        return previous[b.count]
    }
}
