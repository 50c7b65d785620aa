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
            object["regions"] = plan.selection.regions.map { entry -> [String: any Sendable] in
                ["id": entry.id.rawValue, "name": plan.tree.region(entry.id)!.name(in: language), "broughtBy": entry.broughtBy.rawValue,
                 "sizeOnDiskInBytes": plan.regionSizes[entry.id].map { $0 as any Sendable } ?? NSNull()]
            }
            object["bundleList"] = plan.bundles.map { b -> [String: any Sendable] in
                ["digest": b.digest.description, "size": b.info.size, "cached": b.cached, "forStore": b.forStore, "regions": b.regions.map(\.rawValue)]
            }
            terminal.event(object)
        } else {
            terminal.line("plan for \(recipe.name): catalog \(plan.tree.catalog.catalog) \(plan.tree.catalog.mapVersion), block size \(recipe.blockSize)")
            let width = plan.selection.regions.map { $0.id.rawValue.count }.max() ?? 10
            for entry in plan.selection.regions {
                let size = plan.regionSizes[entry.id].map(ByteCount.format) ?? "?"
                let via = entry.broughtBy == entry.id ? "" : "  (via \(entry.broughtBy))"
                terminal.line("  \(entry.id.rawValue.rightPadded(width))  \(size.leftPadded(10))  \(plan.tree.region(entry.id)!.name(in: language))\(via)")
            }
            let cached = plan.bundles.filter(\.cached).count
            terminal.line("bundles: \(plan.bundles.count) (\(cached) in the download cache, \(plan.bundles.count - cached) to fetch)")
            terminal.line("download: \(ByteCount.format(plan.downloadBytes)) (\(plan.downloadBytes) bytes)")
            terminal.line("size on disk: \(plan.sizeOnDisk.map { "\(ByteCount.format($0)) (\($0) bytes)" } ?? "unknown (catalog gives no sizes for this block size)")")
            terminal.line("cache seed: up to \(ByteCount.format(plan.cacheSeedBytes))")
            if let capacity = recipe.capacity {
                terminal.line("capacity: \(ByteCount.format(capacity)) — \(over == nil ? "fits" : "does NOT fit, over by \(ByteCount.format(over!)) (\(over!) bytes)")")
            }
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
}
