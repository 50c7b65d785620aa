import MapBuild
import MapFormat

/// A plan's totals as label and value lines: `plan` prints them as `label: value`, and its
/// `--html` and `--markdown` reports show the same lines, so every view reads one computation.
enum PlanSummary {
    static func lines(_ plan: PlanPreview, cache: String) -> [(label: String, value: String)] {
        let recipe = plan.recipe
        // Counted in place: `filter` would copy 16,000 bundles (and retain their fields) to count them.
        let storeCount = plan.bundles.count { $0.forStore }
        let seedCount = plan.bundles.count - storeCount
        let cached = plan.bundles.count { $0.cached }
        var lines: [(String, String)] = [
            ("regions", "\(plan.selection.regions.count)"),
            (
                "bundles",
                "\(plan.bundles.count): \(storeCount) for the store, \(seedCount) for the cache seed only; \(cached) in the download cache \(cache), \(plan.bundles.count - cached) to fetch"
            ),
            (
                "compressed",
                "\(exact(plan.totalBundleBytes)): store bundles \(ByteCount.format(plan.storeBundleBytes)), cache seed bundles \(ByteCount.format(plan.seedBundleBytes))"
            ),
            ("download", exact(plan.downloadBytes)),
            ("size on disk", plan.sizeOnDisk.map(exact) ?? "unknown (catalog gives no sizes for this block size)"),
            ("cache seed", "up to \(ByteCount.format(plan.cacheSeedBytes))"),
            ("block size", "\(recipe.blockSize)"),
        ]
        if let capacity = recipe.capacity {
            let over = plan.capacityOvershoot
            lines.append(
                ("capacity", "\(ByteCount.format(capacity)) — " + (over.map { "does NOT fit, over by \(exact($0))" } ?? "fits")))
        }
        return lines
    }

    /// `12.3 KiB (12595 bytes)`.
    private static func exact(_ bytes: Int64) -> String { "\(ByteCount.format(bytes)) (\(bytes) bytes)" }
}
