/// A region selector as a user writes it: an id or an exact localized name.
public struct RegionSelector: Sendable, Equatable {
    /// The text as written.
    public let text: String
    /// Where it was written (`recipe.yaml:7`), for messages.
    public let location: String?
    /// Wraps a selector.
    public init(_ text: String, location: String? = nil) { self.text = text; self.location = location }
}

/// Why a selection could not be resolved.
public enum ResolutionError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownRegion(RegionSelector, suggestions: [RegionID])
    case ambiguousName(RegionSelector, matches: [RegionID])

    public var description: String {
        switch self {
        case .unknownRegion(let selector, let suggestions):
            let hint = suggestions.isEmpty ? "; run `mappack regions CATALOG` to list the ids"
                : "; did you mean \(suggestions.map { "'\($0)'" }.joined(separator: ", "))?"
            return "\(selector.location.map { "\($0): " } ?? "")unknown region '\(selector.text)'\(hint)"
        case .ambiguousName(let selector, let matches):
            return "\(selector.location.map { "\($0): " } ?? "")region name '\(selector.text)' matches several regions: \(matches.map(\.rawValue).joined(separator: ", ")); write the id instead"
        }
    }
}

/// The outcome of resolving includes and excludes.
public struct RegionSelection: Sendable, Equatable {
    /// Selected regions in tree order (parents before children), each with the include that brought it in.
    public let regions: [(id: RegionID, broughtBy: RegionID)]
    /// Bundles the selection needs, each once, sorted.
    public let bundles: [BundleDigest]

    /// Nothing selected.
    public static let empty = RegionSelection(regions: [], bundles: [])

    public static func == (lhs: RegionSelection, rhs: RegionSelection) -> Bool {
        lhs.bundles == rhs.bundles && lhs.regions.map(\.id) == rhs.regions.map(\.id) && lhs.regions.map(\.broughtBy) == rhs.regions.map(\.broughtBy)
    }
}

extension RegionTree {
    /// Finds the one region `selector` names: an id first, then an exact localized name in any language.
    public func lookup(_ selector: RegionSelector) throws(ResolutionError) -> RegionID {
        let id = RegionID(selector.text)
        if region(id) != nil { return id }
        let matches = regions.filter { $0.names.values.contains(selector.text) }.map(\.id).sorted()
        if matches.count == 1 { return matches[0] }
        if matches.count > 1 { throw .ambiguousName(selector, matches: matches) }
        throw .unknownRegion(selector, suggestions: suggestions(for: selector.text))
    }

    /// Up to three ids (or ids of names) closest to `text` by edit distance.
    public func suggestions(for text: String) -> [RegionID] {
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
        return scored.filter { $0.0 <= limit }.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }.prefix(3).map(\.1)
    }

    /// Resolves includes (each with its subtree) minus excludes (each with its subtree).
    public func resolve(include: [RegionSelector], exclude: [RegionSelector]) throws(ResolutionError) -> RegionSelection {
        var excluded = Set<RegionID>()
        for selector in exclude { excluded.formUnion(subtree(try lookup(selector))) }
        var chosen: [RegionID: RegionID] = [:]
        var order: [RegionID] = []
        for selector in include {
            let root = try lookup(selector)
            for id in subtree(root) where !excluded.contains(id) && chosen[id] == nil {
                chosen[id] = root
                order.append(id)
            }
        }
        // Tree order (a depth-first walk with sorted children, the same as sorting by ancestry
        // path), so parents precede children and output is stable.
        var sorted: [RegionID] = []
        sorted.reserveCapacity(order.count)
        var stack = Array(roots.reversed())
        while let next = stack.popLast() {
            if chosen[next] != nil { sorted.append(next) }
            stack.append(contentsOf: children(of: next).reversed())
        }
        var bundles = Set<BundleDigest>()
        for id in sorted { bundles.formUnion(region(id)?.bundles ?? []) }
        return RegionSelection(regions: sorted.map { ($0, chosen[$0]!) }, bundles: bundles.sorted())
    }
}

/// Levenshtein distance, for "did you mean" hints.
public enum EditDistance {
    /// The number of single-character edits between `a` and `b`.
    public static func between<T: Equatable>(_ a: [T], _ b: [T]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
