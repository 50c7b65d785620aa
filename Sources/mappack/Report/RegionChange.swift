import MapBuild
import MapFormat

/// A region a diff lists: added (only the new side has it), removed (only the old side) or
/// changed (both, with different bundles). A region whose bundles are the same on both sides is
/// counted, never listed.
struct RegionChange: Encodable {
    /// In the order every view lists them.
    enum Change: String, Encodable, CaseIterable {
        case added, removed, changed
    }

    let change: Change
    let id: String
    /// From the new side, or the old for a removed region.
    let name: String
    /// The region's own bundles on its side (the new one, the old for a removed region) and their
    /// compressed bytes.
    let bundles: Int
    let bytes: Int64
    /// The bundles the new side lists for the region that the old does not (all of an added
    /// region's), and their bytes.
    let bundlesAdded: Int
    let bytesAdded: Int64
    /// The bundles the old side listed that the new does not (all of a removed region's).
    let bundlesRemoved: Int
    let bytesRemoved: Int64

    /// Every region that differs between `old` and `new`: added, then removed, then changed, each
    /// by id.
    static func between(old: DiffSide, new: DiffSide) -> (changes: [RegionChange], unchanged: Int) {
        var changes: [RegionChange] = []
        var unchanged = 0
        for id in Set(old.regions.keys).union(new.regions.keys) {
            let before = old.regions[id]
            let after = new.regions[id]
            let change: Change
            switch (before, after) {
            case (nil, _?): change = .added
            case (_?, nil): change = .removed
            case (let before?, let after?) where before != after: change = .changed
            default:
                unchanged += 1
                continue
            }
            let side = change == .removed ? old : new
            let listed = (change == .removed ? before : after) ?? []
            let gained = (after ?? []).subtracting(before ?? [])
            let lost = (before ?? []).subtracting(after ?? [])
            changes.append(
                RegionChange(
                    change: change, id: id.rawValue, name: side.names[id] ?? id.rawValue, bundles: listed.count, bytes: side.bytes(of: listed),
                    bundlesAdded: gained.count, bytesAdded: new.bytes(of: gained), bundlesRemoved: lost.count, bytesRemoved: old.bytes(of: lost)))
        }
        let order = Dictionary(uniqueKeysWithValues: Change.allCases.enumerated().map { ($1, $0) })
        changes.sort { a, b in a.change != b.change ? order[a.change]! < order[b.change]! : a.id < b.id }
        return (changes, unchanged)
    }

    /// The bundles as a person reads them: `3` for an added or removed region, `+1 -1 of 3` for a
    /// changed one.
    var bundlesText: String {
        guard change == .changed else { return "\(bundles)" }
        var parts: [String] = []
        if bundlesAdded > 0 { parts.append("+\(bundlesAdded)") }
        if bundlesRemoved > 0 { parts.append("-\(bundlesRemoved)") }
        return parts.joined(separator: " ") + " of \(bundles)"
    }

    /// The bytes as a person reads them: the region's for an added or removed region, what came
    /// and went for a changed one (`+1.1 MiB -1.0 MiB`).
    var bytesText: String {
        guard change == .changed else { return ByteCount.format(bytes) }
        var parts: [String] = []
        if bundlesAdded > 0 { parts.append("+" + ByteCount.format(bytesAdded)) }
        if bundlesRemoved > 0 { parts.append("-" + ByteCount.format(bytesRemoved)) }
        return parts.joined(separator: " ")
    }

    /// `9 added, 39 removed, 12 changed, 2194 unchanged`.
    static func counts(_ changes: [RegionChange], unchanged: Int) -> String {
        Change.allCases.map { kind in "\(changes.filter { $0.change == kind }.count) \(kind.rawValue)" }.joined(separator: ", ")
            + ", \(unchanged) unchanged"
    }
}
