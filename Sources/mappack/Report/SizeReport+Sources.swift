import Foundation
import MapBuild
import MapFormat

extension SizeReport {
    /// What a build of `plan` would write and download, per selected region and bundle kind. On
    /// disk is the catalog's size for the recipe's block size (the unpacked size where it has none);
    /// download is the compressed bundles' size (the summary says how much the cache already holds).
    init(plan: PlanPreview, cache: String) {
        let recipe = plan.recipe
        let bundles = Dictionary(plan.bundles.filter(\.forStore).map { ($0.digest, $0) }, uniquingKeysWith: { first, _ in first })
        var counted = Set<BundleDigest>()
        var regions: [Region] = []
        for (index, entry) in plan.selection.regions.enumerated() {
            let region = plan.selectedRegion(index)
            var parts: [String: Part] = [:]
            for digest in region.bundles where counted.insert(digest).inserted {
                guard let bundle = bundles[digest] else { continue }
                let kind = bundle.kind ?? "other"
                let onDisk = bundle.sizeOnDisk?[recipe.blockSize] ?? bundle.unpackedSize
                parts[kind, default: Part(kind: kind, onDisk: 0, download: 0)].onDisk &+= onDisk
                parts[kind, default: Part(kind: kind, onDisk: 0, download: 0)].download &+= bundle.size
            }
            regions.append(
                Region(
                    id: entry.id.rawValue, parent: region.parent?.rawValue, name: region.name,
                    parts: parts.values.sorted { $0.kind < $1.kind }, subtreeOnDisk: plan.selectedRegionSizes?[index],
                    subtreeDownload: plan.selectedRegionDownloadSizes[index]))
        }
        self.init(
            kind: "plan", title: "Plan for \(recipe.name): \(plan.catalogName) \(plan.mapVersion)",
            summary: [["recipe", recipe.file]] + PlanSummary.lines(plan, cache: cache).map { [$0.label, $0.value] },
            measures: [.onDisk, .download], regions: regions)
    }

    /// What an image holds, per region and bundle kind: on disk from its files (allocated blocks),
    /// download from its bundles' sizes. A manifest names no kinds: each bundle is labelled from
    /// its files (`kindLabel`).
    init(manifest: ImageManifest, language: String?) {
        var files: [BundleDigest: [(path: String, size: Int64)]] = [:]
        for file in manifest.files { files[file.bundle, default: []].append((file.path.string, file.size)) }
        let sizes = Dictionary(manifest.bundles.map { ($0.digest, $0.size) }, uniquingKeysWith: { first, _ in first })
        var counted = Set<BundleDigest>()
        // Each region's subtree bundles, each once, for its download (as its size on disk counts them).
        let parents = Dictionary(manifest.regions.map { ($0.id, $0.parent) }, uniquingKeysWith: { first, _ in first })
        var subtreeBundles: [RegionID: Set<BundleDigest>] = [:]
        for region in manifest.regions {
            var current: RegionID? = region.id
            var seen = Set<RegionID>()
            while let id = current, parents[id] != nil, seen.insert(id).inserted {
                subtreeBundles[id, default: []].formUnion(region.bundles)
                current = parents[id] ?? nil
            }
        }
        let regions = manifest.regions.map { region -> Region in
            var parts: [String: Part] = [:]
            for digest in region.bundles where counted.insert(digest).inserted {
                let bundleFiles = files[digest] ?? []
                let kind = SizeReport.kindLabel(files: bundleFiles)
                let onDisk = bundleFiles.reduce(Int64(0)) { $0 &+ SizeOnDisk.allocated(size: $1.size, blockSize: manifest.blockSize) }
                parts[kind, default: Part(kind: kind, onDisk: 0, download: 0)].onDisk &+= onDisk
                parts[kind, default: Part(kind: kind, onDisk: 0, download: 0)].download &+= sizes[digest] ?? 0
            }
            return Region(
                id: region.id.rawValue, parent: region.parent?.rawValue,
                name: LocalizedNames.pick(region.names, language: language, fallback: region.id.rawValue),
                parts: parts.values.sorted { $0.kind < $1.kind }, subtreeOnDisk: region.sizeOnDiskInBytes,
                subtreeDownload: (subtreeBundles[region.id] ?? []).reduce(Int64(0)) { $0 &+ (sizes[$1] ?? 0) })
        }
        self.init(
            kind: "inspect", title: "Image \(manifest.name) \(manifest.mapVersion)",
            summary: [
                ["image id", manifest.imageID], ["catalog", manifest.catalog], ["built", manifest.built],
                ["regions", "\(manifest.regions.count)"], ["bundles", "\(manifest.bundles.count)"], ["files", "\(manifest.files.count)"],
                ["block size", "\(manifest.blockSize)"],
            ],
            measures: [.onDisk, .download], regions: regions)
    }
}

extension SizeReport {
    /// What a device downloads to go from `old` to `new`, per region of the new side: the bundles
    /// it lists that the old side lacks (a bundle two regions list counts at the first by id).
    /// Only regions with such bytes are kept, with their ancestors for the treemap's groups; the
    /// regions added, removed and changed lead the report (`changes`).
    init(
        old: DiffSide, new: DiffSide, changes: [RegionChange], unchanged: Int, addedBundles: Set<BundleDigest>, bundleLine: String, download: Int64
    ) {
        var counted = Set<BundleDigest>()
        var parts: [RegionID: [Part]] = [:]
        for id in new.regions.keys.sorted() {
            var kinds: [String: Part] = [:]
            for digest in new.regions[id]!.sorted() where addedBundles.contains(digest) && counted.insert(digest).inserted {
                let kind = new.kinds[digest] ?? "other"
                kinds[kind, default: Part(kind: kind, onDisk: 0, download: 0)].download &+= new.bundleSizes[digest] ?? 0
            }
            if !kinds.isEmpty { parts[id] = kinds.values.sorted { $0.kind < $1.kind } }
        }
        var shown = Set<RegionID>()
        for id in parts.keys {
            var current: RegionID? = id
            while let region = current, new.regions[region] != nil, shown.insert(region).inserted { current = new.parents[region] }
        }
        let regions = shown.sorted().map { id in
            Region(id: id.rawValue, parent: new.parents[id]?.rawValue, name: new.names[id] ?? id.rawValue, parts: parts[id] ?? [])
        }
        self.init(
            kind: "diff", title: "\(old.label.title) → \(new.label.title)",
            summary: [
                ["old", old.label.text], ["new", new.label.text],
                ["regions", RegionChange.counts(changes, unchanged: unchanged)], ["bundles", bundleLine],
                ["a device downloads", "\(ByteCount.format(download)) (\(download) bytes)"],
            ],
            measures: [.download], regions: regions)
        treemapSubject = "new bundles by region"
        self.old = old.label
        self.new = new.label
        self.changes = changes
        self.regionsUnchanged = unchanged
    }
}
