import Foundation
import MapFormat
import MapIO

/// Where an import puts things: the regions' shapes and ancestry, which shard writes which region's
/// places, and each bundle's name, kind and file.
struct ImportLayout: Sendable {
    let regions: [ImportRegion]
    let shapes: [MercatorShape]
    /// Each region's ancestors (positions).
    private let ancestors: [Set<Int>]
    /// Each region's descendants (positions).
    private let descendants: [[Int]]
    /// Each region's rank among the ids, sorted.
    private let rank: [Int]
    /// The shard (0-based) that writes each region's `search.db` (`ImportShardPlan.searchShards`);
    /// all 0 until assigned, as in an unsharded import. Tiles are cut by their order, not by region.
    var searchShard: [Int]

    /// A bundle folder and the file it holds.
    struct Bundle: Sendable {
        let name: String
        let kind: String
        let file: String
    }

    init(regions: [ImportRegion]) {
        self.regions = regions
        shapes = regions.map(\.shape)
        let position = Dictionary(uniqueKeysWithValues: regions.enumerated().map { ($0.element.id, $0.offset) })
        ancestors = regions.map { region in
            var found = Set<Int>()
            var step = region.parent
            while let parent = step, let at = position[parent], found.insert(at).inserted { step = regions[at].parent }
            return found
        }
        var descendants = [[Int]](repeating: [], count: regions.count)
        for (region, above) in ancestors.enumerated() { for ancestor in above { descendants[ancestor].append(region) } }
        self.descendants = descendants
        let sorted = regions.indices.sorted { regions[$0].id < regions[$1].id }
        var rank = [Int](repeating: 0, count: regions.count)
        for (place, index) in sorted.enumerated() { rank[index] = place }
        self.rank = rank
        searchShard = [Int](repeating: 0, count: regions.count)
    }

    /// Refuses region ids whose files would share a path on a device, or whose bundles a name.
    func checkPaths(file: String) throws(ImportError) {
        // Each region's files are regions/ID/tiles.db and regions/ID/search.db, in bundles a device
        // installs side by side.
        if let clash = RegionPathClash.find(regions.map(\.id), files: { _, _ in ["tiles.db", "search.db"] }),
            let region = regions.first(where: { $0.id == clash.second })
        {
            throw .badFeature(file: file, field: "features[\(region.featureIndex)].properties.id", problem: clash.problem)
        }
        var stems: [String: Int] = [:]
        for (index, region) in regions.enumerated() {
            let stem = ImportLayout.stem(region.id)
            if let other = stems.updateValue(index, forKey: stem) {
                throw .badFeature(
                    file: file, field: "features[\(region.featureIndex)].properties.id",
                    problem: "'\(region.id)' and '\(regions[other].id)' give the same bundle name \(stem); rename one")
            }
        }
    }

    /// Throws when a region's shape could not be read back from its scratch file, which leaves the
    /// tests that read it wrong (`ShapeStore.check`).
    func checkShapes() throws(ImportError) {
        do { try shapes.first?.grid.store.check() } catch { throw .failed(reason: "reading the regions' shapes back: \(error)") }
    }

    /// A region id as one folder name: `europe/ch` → `europe.ch`.
    static func stem(_ id: RegionID) -> String { id.rawValue.replacingOccurrences(of: "/", with: ".") }

    /// The regions whose boxes meet column `x` of `zoom`: the only ones a tile of it can meet.
    func candidates(zoom: Int, x: Int) -> [Int] {
        let strip = MercatorShape.Box.tile(zoom: zoom, x: x, y: 0)
        return shapes.indices.filter { shapes[$0].box.minX <= strip.maxX && strip.minX <= shapes[$0].box.maxX }
    }

    /// The columns of `zoom` whose tiles can meet a region (those `candidates` holds one for), as
    /// ascending, disjoint ranges: all an import has to read of the zoom.
    func columns(zoom: Int) -> [ClosedRange<Int64>] {
        let scale = Double(Int64(1) << zoom)
        let last = (Int64(1) << zoom) - 1
        let spans = shapes.indices.compactMap { index -> ClosedRange<Int64>? in
            let box = shapes[index].box
            guard box.minX <= box.maxX else { return nil }
            // Closed strips: a box edge on a column's edge meets the column on either side.
            let low = min(last, max(0, Int64((box.minX * scale).rounded(.up)) - 1))
            return low...max(low, min(last, Int64((box.maxX * scale).rounded(.down))))
        }
        var merged: [ClosedRange<Int64>] = []
        for span in spans.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let previous = merged.last, span.lowerBound <= previous.upperBound + 1 {
                merged[merged.count - 1] = previous.lowerBound...max(previous.upperBound, span.upperBound)
            } else {
                merged.append(span)
            }
        }
        return merged
    }

    /// `hits` without the regions that have a descendant among them, sorted by id.
    func deepest(_ hits: [Int]) -> [Int] {
        var kept = hits
        if hits.count > 1 {
            var covered = Set<Int>()
            for hit in hits { covered.formUnion(ancestors[hit]) }
            kept = hits.filter { !covered.contains($0) }
        }
        return kept.sorted { rank[$0] < rank[$1] }
    }

    /// The bundle for the tiles of `members` (sorted by id): the region's own, or a shared one.
    func tileBundle(for members: [Int]) -> Bundle {
        if members.count == 1 {
            let region = regions[members[0]]
            return Bundle(name: ImportLayout.stem(region.id) + ".tiles", kind: TileImporter.Kind.tiles, file: "regions/\(region.id)/tiles.db")
        }
        let key = String(SHA256.hex(Data(members.map { regions[$0].id.rawValue }.joined(separator: "\n").utf8)).prefix(16))
        return Bundle(name: "shared." + key, kind: TileImporter.Kind.shared, file: "shared/\(key)/tiles.db")
    }

    /// The bundle for a region's search database.
    func searchBundle(for region: Int) -> Bundle {
        let id = regions[region].id
        return Bundle(name: ImportLayout.stem(id) + ".search", kind: TileImporter.Kind.search, file: "regions/\(id)/search.db")
    }

    /// `[west, south, east, north]` around the boxes of `members`.
    func bbox(of members: [Int]) -> [Double] {
        let boxes = members.map { regions[$0].bbox }
        if boxes.count == 1 { return boxes[0] }
        var intervals: [(west: Double, east: Double)] = []
        for box in boxes { intervals += box[0] <= box[2] ? [(box[0], box[2])] : [(box[0], 180), (-180, box[2])] }
        let (west, east) = ImportRegion.shortestArc(intervals)
        return [west, boxes.map { $0[1] }.min()!, east, boxes.map { $0[3] }.max()!]
    }

    /// The regions whose places `shard` writes among the deepest whose polygons hold `point` (a
    /// place's), sorted by id. Only the shard's regions are tested, and the descendants of those that hold it: a region
    /// is among the deepest when none of its descendants holds the point too.
    func deepestHolding(_ point: MercatorShape.Point, shard: Int) -> [Int] {
        // Each polygon tested once at most: a country is tested for itself and as its continent's descendant.
        var holds = [Bool?](repeating: nil, count: shapes.count)
        func holding(_ region: Int) -> Bool {
            if let known = holds[region] { return known }
            let found = shapes[region].contains(point)
            holds[region] = found
            return found
        }
        return shapes.indices.filter { region in
            searchShard[region] == shard && holding(region) && !descendants[region].contains(where: holding)
        }.sorted { rank[$0] < rank[$1] }
    }
}

/// The regions whose boxes meet a tile, found by column: tiles come in Hilbert order, so columns
/// recur, and each column's candidates (`ImportLayout.candidates`) are found once (at most 2^16
/// columns kept, then all forgotten).
struct ImportTileCandidates {
    let layout: ImportLayout
    /// True: a column outside its zoom's `ImportLayout.columns` has none, known without looking.
    let checksColumns: Bool
    private var byColumn: [Int64: [Int]] = [:]
    private var near: [Int: [ClosedRange<Int64>]] = [:]

    init(layout: ImportLayout, checksColumns: Bool) {
        self.layout = layout
        self.checksColumns = checksColumns
    }

    /// The regions whose boxes meet the tile at `zoom`, `x`, XYZ row `y`, and the tile's box.
    mutating func regions(zoom: Int, x: Int64, y: Int64) -> (regions: [Int], tile: MercatorShape.Box) {
        let key = Int64(zoom) << 40 | x
        let candidates: [Int]
        if let known = byColumn[key] {
            candidates = known
        } else {
            if byColumn.count >= 1 << 16 { byColumn.removeAll(keepingCapacity: true) }
            var inColumns = true
            if checksColumns {
                if near[zoom] == nil { near[zoom] = layout.columns(zoom: zoom) }
                inColumns = near[zoom]?.contains(where: { $0.contains(x) }) ?? false
            }
            candidates = inColumns ? layout.candidates(zoom: zoom, x: Int(x)) : []
            byColumn[key] = candidates
        }
        let tile = MercatorShape.Box.tile(zoom: zoom, x: Int(x), y: Int(y))
        guard !candidates.isEmpty else { return ([], tile) }
        let shapes = layout.shapes
        return (candidates.filter { shapes[$0].box.minY <= tile.maxY && tile.minY <= shapes[$0].box.maxY }, tile)
    }
}
