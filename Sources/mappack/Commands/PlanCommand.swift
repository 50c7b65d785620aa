import Foundation
import MapBuild
import MapFetch
import MapFormat
import MapIO

/// `mappack plan RECIPE`: everything a build would do, with sizes, without downloading.
enum PlanCommand {
    static func run(_ raw: [String], terminal: Terminal) throws -> Int32 {
        let arguments = try Arguments(raw, flags: ["json"], options: ["cache"])
        let recipePath = try arguments.expect(["recipe"])[0]
        let cache = DownloadCache(root: FileSystem.absolute(arguments.option("cache") ?? DownloadCache.defaultRoot()))
        let recipe = try Recipe.load(recipePath)
        let plan = try BuildPlan.make(recipe: recipe, cache: cache)
        let language = recipe.language
        let over = plan.capacityOvershoot
        if terminal.json {
            var object: [String: any Sendable] = [
                "recipe": recipe.name, "catalog": plan.tree.catalog.catalog, "mapVersion": plan.tree.catalog.mapVersion.rawValue,
                "blockSize": recipe.blockSize, "downloadBytes": plan.downloadBytes, "totalBundleBytes": plan.totalBundleBytes,
                "bundles": plan.bundles.count, "bundlesCached": plan.bundles.filter(\.cached).count,
                "sizeOnDiskInBytes": plan.sizeOnDisk.map { $0 as any Sendable } ?? NSNull(),
                "cacheSeedBytes": plan.cacheSeedBytes, "capacity": recipe.capacity.map { $0 as any Sendable } ?? NSNull(),
                "fits": over == nil, "overshootBytes": over.map { $0 as any Sendable } ?? NSNull(),
            ]
            let regions = plan.tree.catalog.regions
            object["regions"] = zip(plan.selection.regions, plan.selection.regionPositions).enumerated().map { index, pair -> [String: any Sendable] in
                let (entry, position) = pair
                return ["id": entry.id.rawValue, "name": regions[Int(position)].name(in: language), "broughtBy": entry.broughtBy.rawValue,
                        "sizeOnDiskInBytes": plan.selectedRegionSizes.map { $0[index] as any Sendable } ?? NSNull()]
            }
            object["bundleList"] = plan.bundles.map { b -> [String: any Sendable] in
                ["digest": b.digest.description, "size": b.info.size, "cached": b.cached, "forStore": b.forStore, "regions": b.regions.map(\.rawValue)]
            }
            terminal.event(object)
        } else {
            // One write for the whole table: a planet plan has thousands of rows.
            var out = "plan for \(recipe.name): catalog \(plan.tree.catalog.catalog) \(plan.tree.catalog.mapVersion), block size \(recipe.blockSize)\n"
            let regions = plan.tree.catalog.regions
            let width = plan.selection.regions.map { $0.id.rawValue.displayWidth }.max() ?? 10
            for (index, (entry, position)) in zip(plan.selection.regions, plan.selection.regionPositions).enumerated() {
                let size = plan.selectedRegionSizes.map { ByteCount.format($0[index]) } ?? "?"
                out += "  "
                out.appendPadded(entry.id.rawValue, width: width, alignRight: false)
                out += "  "
                out.appendPadded(size, width: 10, alignRight: true)
                out += "  "
                out += regions[Int(position)].name(in: language)
                if entry.broughtBy != entry.id { out += "  (via \(entry.broughtBy))" }
                out += "\n"
            }
            let cached = plan.bundles.filter(\.cached).count
            out += "bundles: \(plan.bundles.count) (\(cached) in the download cache, \(plan.bundles.count - cached) to fetch)\n"
            out += "download: \(ByteCount.format(plan.downloadBytes)) (\(plan.downloadBytes) bytes)\n"
            out += "size on disk: \(plan.sizeOnDisk.map { "\(ByteCount.format($0)) (\($0) bytes)" } ?? "unknown (catalog gives no sizes for this block size)")\n"
            out += "cache seed: up to \(ByteCount.format(plan.cacheSeedBytes))"
            if let capacity = recipe.capacity {
                out += "\ncapacity: \(ByteCount.format(capacity)) — \(over == nil ? "fits" : "does NOT fit, over by \(ByteCount.format(over!)) (\(over!) bytes)")"
            }
            terminal.line(out)
        }
        try plan.checkCapacity()
        return 0
    }
}

extension String {
    /// Right-aligns to `width`.
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
    /// Left-aligns to `width` (cheaper than Foundation's `padding(toLength:)` for long tables).
    func rightPadded(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }

    /// `count` (characters), computed from the bytes when every one is printable ASCII, where each
    /// byte is a character; thousands of table rows need it.
    var displayWidth: Int {
        utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F } ? utf8.count : count
    }

    /// Appends `text` padded with spaces to `width` characters, on the left when `alignRight`.
    mutating func appendPadded(_ text: String, width: Int, alignRight: Bool) {
        let padding = max(0, width - text.displayWidth)
        if !alignRight { self += text }
        for _ in 0..<padding { self += " " }
        if alignRight { self += text }
    }
}
