import Foundation
import MapFormat

/// The demo world's region tree and bundle plan, built from iso-codes and the command line.
///
/// Everything here is decided before `--only` prunes the tree (child layout, border pairs, which
/// leaves change), so a tiny test world holds exactly the same bundles, byte for byte, as the
/// same regions in the full world.
struct WorldTree: Sendable {
    /// The root that holds the world overview (the cache seed's data).
    static let worldID = "world"
    /// Under one parent, every `borderStride`-th adjacent pair of leaf children shares a border bundle.
    static let borderStride = 7
    /// About one leaf in 25 gets a tiles database ten times the usual size.
    static let largeShare = 0.04

    /// Regions in source order: `world`, then each continent's tree depth-first, children sorted by id.
    let regions: [DemoRegion]
    /// Bundles in the order they are listed, each once (border bundles are listed by two regions).
    let bundles: [BundlePlan]
    /// Names of the bundles whose bytes differ from the base version, sorted.
    let changed: [String]
    /// Number of leaf regions.
    let leafCount: Int

    /// Builds the tree and plans its bundles.
    init(isoCodes: IsoCodes, options: WorldOptions) throws(DemoWorldError) {
        var all = try WorldTree.allRegions(isoCodes: isoCodes, full: options.full, seed: options.seed)
        let borders = WorldTree.borderPairs(all)

        // Prune to the requested subtrees, keeping their ancestors (as parents) and `world`.
        var kept = Set(all.keys)
        if !options.only.isEmpty {
            kept = [WorldTree.worldID]
            for id in options.only {
                guard all[id] != nil else { throw try WorldTree.unknownRegion(id, in: all, isoCodes: isoCodes, options: options) }
                var ancestor = all[id]?.parent
                while let current = ancestor {
                    kept.insert(current)
                    ancestor = all[current]?.parent
                }
                var pending = [id]
                while let next = pending.popLast() {
                    kept.insert(next)
                    pending += all[next]?.children ?? []
                }
            }
            for id in Array(all.keys) {
                if kept.contains(id) { all[id]?.children.removeAll { !kept.contains($0) } } else { all[id] = nil }
            }
        }

        var bundles: [BundlePlan] = []
        var changed: [String] = []
        var leafCount = 0
        let versionsDiffer = options.mapVersion != options.baseVersion
        for (first, second) in borders where kept.contains(first) && kept.contains(second) {
            guard let parent = all[first]?.parent else { continue }
            let pair = WorldTree.lastComponent(first) + "-" + WorldTree.lastComponent(second)
            let plan = BundlePlan(
                name: "borders." + parent.replacingOccurrences(of: "/", with: ".") + "." + pair,
                kind: "border", content: .border(folder: "borders/\(parent)/\(pair)"))
            bundles.append(plan)
            all[first]?.bundles.append(plan.name)
            all[second]?.bundles.append(plan.name)
        }

        var ordered: [DemoRegion] = []
        var stack = ([WorldTree.worldID] + M49.continents.map(\.id)).filter { all[$0] != nil }.reversed().map { $0 }
        while let id = stack.popLast() {
            guard var region = all[id] else { continue }
            stack += region.children.reversed()
            var own: [BundlePlan] = []
            if id == WorldTree.worldID {
                own.append(BundlePlan(name: "world.overview", kind: "overview", content: .worldOverview))
            } else if !region.children.isEmpty {
                own.append(
                    BundlePlan(
                        name: region.bundleStem + ".overview", kind: "overview",
                        content: .regionOverview(region: id, area: WorldTree.tileArea(region))))
            } else {
                leafCount += 1
                // Only tiles and search data change between versions: routing graphs and overviews are
                // kept stable so an update is a realistic mix of new and reused bundles.
                let isChanged =
                    versionsDiffer
                    && SeededRandom.fraction("change", id, options.mapVersion, seed: options.seed) < options.changeFraction
                // With `--edit-fraction` a changed leaf starts from the base version's bytes and edits a share of them.
                let edit = isChanged ? options.editFraction.map { BundlePlan.Edit(version: options.mapVersion, fraction: $0) } : nil
                let version = isChanged && edit == nil ? options.mapVersion : options.baseVersion
                let large = SeededRandom.fraction("large", id, seed: options.seed) < WorldTree.largeShare
                let center = region.center ?? [0, 0]
                own.append(
                    BundlePlan(
                        name: region.bundleStem + ".tiles", kind: "tiles",
                        content: .tiles(region: id, version: version, large: large, area: WorldTree.tileArea(region), edit: edit)))
                own.append(
                    BundlePlan(
                        name: region.bundleStem + ".search", kind: "search",
                        content: .search(
                            region: id, version: version, names: region.names,
                            cities: region.cities ?? [], center: center, edit: edit)))
                own.append(BundlePlan(name: region.bundleStem + ".routing", kind: "routing", content: .routing(region: id)))
                if isChanged { changed += [own[0].name, own[1].name] }
            }
            region.bundles = own.map(\.name) + region.bundles
            bundles += own
            ordered.append(region)
        }
        regions = ordered
        self.bundles = bundles
        self.changed = changed.sorted()
        self.leafCount = leafCount
    }

    /// Every region of the unpruned tree by id, children linked and sorted, with geometry and cities.
    private static func allRegions(isoCodes: IsoCodes, full: Bool, seed: UInt64) throws(DemoWorldError) -> [String: DemoRegion] {
        var all: [String: DemoRegion] = [:]
        func add(_ region: DemoRegion) throws(DemoWorldError) {
            guard all[region.id] == nil else {
                throw DemoWorldError.badIsoCodes(path: "/usr/share/iso-codes/json", reason: "two entries map to region id '\(region.id)'")
            }
            all[region.id] = region
        }

        try add(DemoRegion(id: worldID, parent: nil, names: worldNames, center: [0, 0], bbox: [-180, -85, 180, 85]))
        for continent in M49.continents {
            try add(DemoRegion(id: continent.id, parent: nil, names: continent.names, center: continent.center, bbox: continent.bbox))
        }
        var countryIDs: [String: String] = [:]
        var continents: [String: String] = [:]
        for country in isoCodes.countries {
            guard let continent = M49.continent(ofCountry: country.alpha2) else {
                throw DemoWorldError.badIsoCodes(
                    path: "/usr/share/iso-codes/json/iso_3166-1.json",
                    reason: "country \(country.alpha2) is missing from the continent table in M49.swift; add it there")
            }
            let id = continent + "/" + country.alpha2.lowercased()
            countryIDs[country.alpha2] = id
            continents[country.alpha2] = continent
            try add(DemoRegion(id: id, parent: continent, names: isoCodes.names(of: country)))
        }

        // A subdivision's id follows its `parent` chain (FR-01 → FR-ARA → FR), so it can sit 2+ levels below the country.
        let subdivisions = Dictionary(isoCodes.subdivisions.map { ($0.code, $0) }, uniquingKeysWith: { first, _ in first })
        func subdivisionID(_ subdivision: IsoCodes.Subdivision, depth: Int) -> String? {
            guard depth < 8, let country = countryIDs[subdivision.country] else { return nil }
            guard let parentCode = subdivision.parent, let parent = subdivisions[parentCode] else {
                return country + "/" + subdivision.suffix.lowercased()
            }
            return subdivisionID(parent, depth: depth + 1).map { $0 + "/" + subdivision.suffix.lowercased() }
        }
        for subdivision in isoCodes.subdivisions where full || continents[subdivision.country] == "europe" {
            guard let id = subdivisionID(subdivision, depth: 0) else { continue }
            let parent = String(id[..<(id.lastIndex(of: "/") ?? id.endIndex)])
            try add(DemoRegion(id: id, parent: parent, names: isoCodes.names(of: subdivision)))
        }

        for region in all.values {
            if let parent = region.parent { all[parent]?.children.append(region.id) }
        }
        for id in Array(all.keys) { all[id]?.children.sort() }

        // Positions below the continents are synthetic (iso-codes has no coordinates): each parent's box
        // is split into a grid, one cell per child, so boxes nest and centres stay inside their parents.
        var pending = M49.continents.map(\.id)
        while let id = pending.popLast() {
            guard let region = all[id] else { continue }
            pending += region.children
            guard let box = region.bbox, !region.children.isEmpty else { continue }
            let count = region.children.count
            let columns = Int(Double(count).squareRoot().rounded(.up))
            let rows = (count + columns - 1) / columns
            let width = (box[2] - box[0]) / Double(columns)
            let height = (box[3] - box[1]) / Double(rows)
            for (index, child) in region.children.enumerated() {
                let west = box[0] + Double(index % columns) * width
                let north = box[3] - Double(index / columns) * height
                let cell = [west + width * 0.05, north - height * 0.95, west + width * 0.95, north - height * 0.05].map(rounded)
                all[child]?.bbox = cell
                all[child]?.center = [rounded((cell[1] + cell[3]) / 2), rounded((cell[0] + cell[2]) / 2)]
                var random = SeededRandom("cities", child, seed: seed)
                all[child]?.cities = (0..<3).map { _ in PlaceNames.town(&random) }
            }
        }
        return all
    }

    /// Pairs of adjacent leaf siblings that share a border bundle: every `borderStride`-th pair under each parent.
    private static func borderPairs(_ all: [String: DemoRegion]) -> [(String, String)] {
        var pairs: [(String, String)] = []
        for id in all.keys.sorted() {
            let leaves = (all[id]?.children ?? []).filter { all[$0]?.children.isEmpty ?? false }
            for index in stride(from: 0, to: leaves.count - 1, by: borderStride) {
                pairs.append((leaves[index], leaves[index + 1]))
            }
        }
        return pairs
    }

    /// The area a region's tiles cover: its bounding box, or a small box around its centre.
    private static func tileArea(_ region: DemoRegion) -> BundlePlan.TileArea {
        if let box = region.bbox, box.count == 4 { return BundlePlan.TileArea(west: box[0], south: box[1], east: box[2], north: box[3]) }
        let center = region.center ?? [0, 0]
        return BundlePlan.TileArea(west: center[1] - 0.5, south: center[0] - 0.5, east: center[1] + 0.5, north: center[0] + 0.5)
    }

    private static func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }

    private static func lastComponent(_ id: String) -> String { String(id[(id.lastIndex(of: "/").map { id.index(after: $0) } ?? id.startIndex)...]) }

    private static let worldNames = [
        "en": "World", "de": "Welt", "es": "Mundo", "fr": "Monde", "it": "Mondo", "ja": "世界",
        "ko": "세계", "nl": "Wereld", "pl": "Świat", "ru": "Мир", "zh": "世界",
    ]

    /// The error for an `--only` id the tree lacks: a subdivision that needs `--full`, or the nearest id or name.
    private static func unknownRegion(
        _ id: String, in all: [String: DemoRegion], isoCodes: IsoCodes,
        options: WorldOptions
    ) throws(DemoWorldError) -> DemoWorldError {
        if !options.full, try allRegions(isoCodes: isoCodes, full: true, seed: options.seed)[id] != nil {
            return .unknownRegion(id: id, suggestion: nil, needsFull: true)
        }
        // `europe/switzerland`: the last part may be a name rather than a code.
        let last = lastComponent(id).replacingOccurrences(of: "-", with: " ")
        let byName = all.values.filter { region in region.names.values.contains { $0.lowercased() == last } }.map(\.id).sorted()
        if let match = byName.first { return .unknownRegion(id: id, suggestion: match, needsFull: false) }

        // A typo in a code (`europe/chh`): the nearest id at the same depth.
        let depth = id.split(separator: "/").count
        let wanted = Array(id.utf8)
        var best: (id: String, distance: Int)?
        for candidate in all.keys.sorted() where candidate.split(separator: "/").count == depth {
            let distance = EditDistance.between(wanted, Array(candidate.utf8))
            if distance < (best?.distance ?? Int.max) { best = (candidate, distance) }
        }
        // Codes are two or three letters, so only a one-letter slip in them is a convincing match.
        if let best, best.distance <= (last.count > 3 ? 2 : 1) { return .unknownRegion(id: id, suggestion: best.id, needsFull: false) }

        // `europe/swiss`: a sibling whose English name starts like the last part.
        let parent = id.split(separator: "/").dropLast().joined(separator: "/")
        let prefix = String(last.prefix(3))
        let byPrefix = all.values.filter { region in
            (region.parent ?? "") == parent && prefix.count == 3 && (region.names["en"] ?? "").lowercased().hasPrefix(prefix)
        }.map(\.id).sorted().first
        return .unknownRegion(id: id, suggestion: byPrefix, needsFull: false)
    }
}
