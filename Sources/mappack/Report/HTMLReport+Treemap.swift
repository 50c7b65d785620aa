import Foundation
import MapFormat

extension HTMLReport {
    /// A rectangle of the treemap: a group (a top-level region, or a country inside one) holding
    /// the blocks below it, and the bytes of the region's own bundles where it has any.
    private struct Block {
        let id: String
        let name: String
        var bytes: Int64 = 0
        /// The region's own bundles, drawn split by kind.
        var own: SizeReport.Region?
        var ownBytes: Int64 = 0
        var children: [String: Block] = [:]

        /// Adds `region`'s `bytes` under the groups of `path` (ids below this block).
        mutating func insert(_ region: SizeReport.Region, bytes: Int64, path: ArraySlice<String>, names: [String: String]) {
            self.bytes &+= bytes
            guard let next = path.first else {
                own = region
                ownBytes = bytes
                return
            }
            children[next, default: Block(id: next, name: names[next] ?? next)].insert(region, bytes: bytes, path: path.dropFirst(), names: names)
        }
    }

    /// Group levels: the top-level region, then the country inside it.
    private static let groupDepth = 2
    /// The height of a group's name above its blocks, and the least size a group shows one in.
    private static let header = 15.0, headerMinWidth = 60.0, headerMinHeight = 40.0

    /// A treemap of `measure`: the regions with bytes grouped by top-level region and country,
    /// each region's rectangle split by kind; every rectangle big enough is named.
    static func treemap(_ report: SizeReport, measure: SizeReport.Measure, kinds: [String]) -> String {
        let total = report.total(measure)
        var svg =
            "<section id=\"treemap-\(measure.rawValue)\"><h2>Where the bytes go: \(escape(report.treemapSubject)), \(measure.title), \(escape(ByteCount.format(total)))</h2>\n"
        svg +=
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" width=\"\(Int(width))\" height=\"\(Int(height))\" data-measure=\"\(measure.rawValue)\" data-total=\"\(total)\">\n"
        let root = blocks(report, measure: measure)
        if root.children.isEmpty {
            svg += "<text x=\"\(Int(width / 2))\" y=\"\(Int(height / 2))\" text-anchor=\"middle\">nothing</text>"
        } else {
            draw(root, in: Treemap.Rect(x: 0, y: 0, width: width, height: height), depth: 0, measure: measure, into: &svg)
        }
        return svg + "</svg></section>\n"
    }

    /// The report's regions with bytes in `measure`, under their top-level region and country
    /// (found through the parents the report holds; a parent it lacks is named by its id).
    private static func blocks(_ report: SizeReport, measure: SizeReport.Measure) -> Block {
        let byID = Dictionary(report.regions.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let names = byID.mapValues(\.name)
        var root = Block(id: "", name: "")
        for region in report.regions {
            let bytes = region.parts.reduce(Int64(0)) { $0 &+ $1.bytes(measure) }
            guard bytes > 0 else { continue }
            var chain = [region.id]
            var seen: Set = [region.id]
            var parent = region.parent
            while let id = parent, seen.insert(id).inserted {
                chain.append(id)
                parent = byID[id]?.parent
            }
            chain.reverse()
            let groups = chain.prefix(groupDepth)
            let path = groups.last == region.id ? groups : groups + [region.id]
            root.insert(region, bytes: bytes, path: path[...], names: names)
        }
        return root
    }

    /// Draws `block` in `box`: a group as its name on top and its blocks below, outlined; a
    /// region's own bundles as a rectangle per kind.
    private static func draw(_ block: Block, in box: Treemap.Rect, depth: Int, measure: SizeReport.Measure, into svg: inout String) {
        guard !block.children.isEmpty else {
            if let own = block.own { drawRegion(own, bytes: block.ownBytes, in: box, measure: measure, into: &svg) }
            return
        }
        var inner = box
        let named = depth > 0 && box.width >= headerMinWidth && box.height >= headerMinHeight
        if named {
            inner.y += header
            inner.height -= header
        }
        // The blocks below, largest first; the group's own region as one of them.
        var items: [(Block, isOwn: Bool)] = block.children.values.map { ($0, false) }
        if block.own != nil { items.append((block, true)) }
        items.sort { a, b in
            let x = a.isOwn ? a.0.ownBytes : a.0.bytes
            let y = b.isOwn ? b.0.ownBytes : b.0.bytes
            return x != y ? x > y : a.0.id < b.0.id
        }
        if depth > 0 { svg += "<g data-group=\"\(escape(block.id))\" data-bytes=\"\(block.bytes)\">" }
        let boxes = Treemap.layout(items.map { Double($0.isOwn ? $0.0.ownBytes : $0.0.bytes) }, in: inner)
        for ((item, isOwn), rect) in zip(items, boxes) {
            if isOwn, let own = item.own {
                drawRegion(own, bytes: item.ownBytes, in: rect, measure: measure, into: &svg)
            } else {
                draw(item, in: rect, depth: depth + 1, measure: measure, into: &svg)
            }
        }
        if depth > 0 {
            svg += "<rect " + geometry(box) + " fill=\"none\" stroke=\"#1d2430\" stroke-width=\"\(depth == 1 ? 2 : 1)\"/>"
            if named, let shown = label(block.name, width: box.width) {
                svg +=
                    "<text class=\"group\" x=\"\(f(box.x + 4))\" y=\"\(f(box.y + 12))\">\(escape(shown))<title>\(escape(block.name)) (\(escape(block.id)))</title></text>"
            }
            svg += "</g>\n"
        }
    }

    /// One region's own bundles: a rectangle per kind inside its outline, and its name when it fits.
    private static func drawRegion(
        _ region: SizeReport.Region, bytes: Int64, in box: Treemap.Rect, measure: SizeReport.Measure, into svg: inout String
    ) {
        svg += "<g data-region=\"\(escape(region.id))\" data-bytes=\"\(bytes)\">"
        let parts = region.parts.filter { $0.bytes(measure) > 0 }.sorted { $0.bytes(measure) > $1.bytes(measure) }
        let inner = Treemap.layout(parts.map { Double($0.bytes(measure)) }, in: box)
        for (part, rect) in zip(parts, inner) {
            let bytes = part.bytes(measure)
            let title = "\(escape(region.name)) (\(escape(region.id))) · \(escape(part.kind)): \(escape(ByteCount.format(bytes)))"
            var element = "<rect " + geometry(rect) + " fill=\"\(color(kind: part.kind))\" stroke=\"#ffffff\" stroke-width=\"0.5\" "
            element += "data-region=\"\(escape(region.id))\" data-kind=\"\(escape(part.kind))\" data-bytes=\"\(bytes)\">"
            element += "<title>" + title + "</title></rect>"
            svg += element
        }
        svg += "<rect " + geometry(box) + " fill=\"none\" stroke=\"#1d2430\" stroke-width=\"0.5\"/>"
        if box.height >= 16, let shown = label(region.name, width: box.width) {
            svg += "<text x=\"\(f(box.x + 3))\" y=\"\(f(box.y + 12))\">" + escape(shown) + "</text>"
        }
        svg += "</g>\n"
    }

    /// `name` cut to what a rectangle `width` wide holds at the treemap's 11 px (about 6.5 px a
    /// character, 3 px margins), with `…` where cut; none when not even three characters fit.
    private static func label(_ name: String, width: Double) -> String? {
        let fits = Int((width - 6) / 6.5)
        guard fits >= 3 else { return nil }
        return name.count <= fits ? name : String(name.prefix(fits - 1)) + "…"
    }
}
