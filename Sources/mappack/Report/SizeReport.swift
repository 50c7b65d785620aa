import Foundation

/// What `--html` and `--markdown` show for `plan`, `inspect` and `diff`: the regions as a tree and,
/// for each region, the bytes of its own bundles by kind, on disk and downloaded; for `diff`, first
/// the two sides and the regions added, removed and changed.
struct SizeReport: Encodable {
    /// One measure of bytes the report shows (a treemap each).
    enum Measure: String, Encodable, CaseIterable {
        case onDisk, download

        var title: String {
            switch self {
            case .onDisk: "on disk"
            case .download: "download (compressed)"
            }
        }
    }

    /// The bytes of one kind of bundle a region lists itself.
    struct Part: Encodable {
        let kind: String
        var onDisk: Int64
        var download: Int64

        func bytes(_ measure: Measure) -> Int64 { measure == .onDisk ? onDisk : download }
    }

    struct Region: Encodable {
        let id: String
        let parent: String?
        let name: String
        /// The region's own bundles (a bundle two regions list counts at the first), by kind: the
        /// treemap's rectangles, which add up to the report's total.
        var parts: [Part]
        /// The bytes of the region with everything below it, where the source computed them (a
        /// bundle shared by two regions counts in both, as `plan` and `regions` show them).
        var subtreeOnDisk: Int64? = nil
        var subtreeDownload: Int64? = nil

        func subtree(_ measure: Measure) -> Int64? { measure == .onDisk ? subtreeOnDisk : subtreeDownload }
    }

    /// The report's version, in the page's embedded data.
    let format = "mappack-report/1"
    /// `plan`, `inspect` or `diff`.
    let kind: String
    let title: String
    /// Label and value lines shown at the top.
    let summary: [[String]]
    /// The measures this report has data for, in display order.
    let measures: [Measure]
    /// What the treemaps hold, in their titles.
    var treemapSubject = "store bundles"
    let regions: [Region]
    /// A diff's two sides, the regions it lists (added, removed, changed) and how many regions
    /// are the same on both sides; none for `plan` and `inspect`.
    var old: DiffSide.Label? = nil
    var new: DiffSide.Label? = nil
    var changes: [RegionChange]? = nil
    var regionsUnchanged: Int? = nil

    /// The regions in tree order (parents before children, siblings by id), with their depth.
    func tree() -> [(region: Region, depth: Int)] {
        let ids = Set(regions.map(\.id))
        let children = Dictionary(grouping: regions) { $0.parent.flatMap { ids.contains($0) ? $0 : nil } ?? "" }
        var out: [(Region, Int)] = []
        func visit(_ parent: String, _ depth: Int) {
            for region in (children[parent] ?? []).sorted(by: { $0.id < $1.id }) {
                out.append((region, depth))
                visit(region.id, depth + 1)
            }
        }
        visit("", 0)
        return out
    }

    /// Each region's bytes with everything below it: the source's own numbers when it gave them,
    /// else the sum of the parts below.
    func subtreeTotals(_ measure: Measure) -> [String: Int64] {
        var totals: [String: Int64] = [:]
        if regions.allSatisfy({ $0.subtree(measure) != nil }) {
            for region in regions { totals[region.id] = region.subtree(measure) }
            return totals
        }
        let byID = Dictionary(regions.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for region in regions {
            let own = region.parts.reduce(Int64(0)) { $0 &+ $1.bytes(measure) }
            var current: String? = region.id
            var seen = Set<String>()
            while let id = current, seen.insert(id).inserted {
                totals[id, default: 0] &+= own
                current = byID[id]?.parent
            }
        }
        return totals
    }

    func total(_ measure: Measure) -> Int64 {
        regions.reduce(Int64(0)) { sum, region in region.parts.reduce(sum) { $0 &+ $1.bytes(measure) } }
    }

    /// A kind name for bundles whose source does not say (an image's manifest), as a catalog names
    /// it: `border` for files under `borders/`, `routing` for `.rt` files or a `routing/` folder,
    /// else the largest file's name without its extension (`tiles`, `search`, `overview`), or the
    /// extension where the name is a number.
    static func kindLabel(files: [(path: String, size: Int64)]) -> String {
        guard let largest = files.max(by: { $0.size < $1.size || ($0.size == $1.size && $0.path > $1.path) }) else { return "empty" }
        if largest.path.hasPrefix("borders/") { return "border" }
        let components = largest.path.split(separator: "/")
        let name = components.last.map(String.init) ?? largest.path
        if name.hasSuffix(".rt") || components.dropLast().contains("routing") { return "routing" }
        let stem = name.split(separator: ".", maxSplits: 1).first.map(String.init) ?? name
        if stem.allSatisfy(\.isNumber), let dot = name.lastIndex(of: ".") { return String(name[name.index(after: dot)...]) }
        return stem.isEmpty ? name : stem
    }
}
