import Foundation
import MapBuild
import MapFormat
import MapIO
import MapVerify

/// `mappack diff OLD NEW`: regions and bundles between two images or catalogs, and what a device downloads.
enum DiffCommand {
    /// The parts of an image or a catalog a diff compares.
    struct Side {
        var mapVersion: MapVersion
        var regions: [RegionID: Set<BundleDigest>]
        var bundleSizes: [BundleDigest: Int64]
        /// For the report: each region's parent and name, each bundle's kind.
        var parents: [RegionID: RegionID] = [:]
        var names: [RegionID: String] = [:]
        var kinds: [BundleDigest: String] = [:]
    }

    static func load(_ path: String) throws -> Side {
        if path.hasSuffix(".json") || path.contains("://") {
            let tree = try CatalogSource.load(try Arguments.catalogURL(path))
            var side = Side(
                mapVersion: tree.catalog.mapVersion,
                regions: Dictionary(uniqueKeysWithValues: tree.regions.map { ($0.id, Set($0.bundles)) }),
                bundleSizes: tree.catalog.bundles.mapValues(\.size))
            for region in tree.regions {
                side.parents[region.id] = region.parent
                side.names[region.id] = region.name(in: nil)
            }
            side.kinds = tree.catalog.bundles.compactMapValues(\.kind)
            return side
        }
        guard FileSystem.exists(path) else { throw ImageOpenError.noSuchFile(path: path) }
        let report = FileSystem.isDirectory(path) ? try ImageVerifier.verifyFolder(path, hashContents: false) : try ImageVerifier.verifyPacked(path)
        let manifest = report.manifest
        var side = Side(
            mapVersion: manifest.mapVersion,
            // A hostile manifest may repeat an id or a digest: the first counts, nothing traps.
            regions: Dictionary(manifest.regions.map { ($0.id, Set($0.bundles)) }, uniquingKeysWith: { first, _ in first }),
            bundleSizes: Dictionary(manifest.bundles.map { ($0.digest, $0.size) }, uniquingKeysWith: { first, _ in first }))
        for region in manifest.regions where side.names[region.id] == nil {
            side.parents[region.id] = region.parent
            side.names[region.id] = region.name
        }
        var files: [BundleDigest: [(path: String, size: Int64)]] = [:]
        for file in manifest.files { files[file.bundle, default: []].append((file.path, file.size)) }
        side.kinds = files.mapValues { SizeReport.kindLabel(files: $0) }
        return side
    }

    static func run(_ raw: [String], terminal: Terminal) throws -> Int32 {
        let arguments = try Arguments(raw, verb: Verbs.named("diff")!)
        let paths = try arguments.expect(["old", "new"])
        let old = try load(paths[0])
        let new = try load(paths[1])
        let oldIDs = Set(old.regions.keys)
        let newIDs = Set(new.regions.keys)
        let added = newIDs.subtracting(oldIDs).sorted()
        let removed = oldIDs.subtracting(newIDs).sorted()
        let changed = oldIDs.intersection(newIDs).filter { old.regions[$0] != new.regions[$0] }.sorted()
        let oldBundles = Set(old.bundleSizes.keys)
        let newBundles = Set(new.bundleSizes.keys)
        let kept = oldBundles.intersection(newBundles).sorted()
        let addedBundles = newBundles.subtracting(oldBundles).sorted()
        let dropped = oldBundles.subtracting(newBundles).sorted()
        let download = addedBundles.reduce(Int64(0)) { total, digest in
            // Sizes from an image's manifest are not bounded the way a catalog's are.
            let (sum, overflow) = total.addingReportingOverflow(new.bundleSizes[digest] ?? 0)
            return overflow ? Int64.max : sum
        }
        if terminal.json {
            terminal.record(
                [
                    "from": old.mapVersion.rawValue, "to": new.mapVersion.rawValue,
                    "regionsAdded": added.map(\.rawValue), "regionsRemoved": removed.map(\.rawValue), "regionsChanged": changed.map(\.rawValue),
                    "bundlesKept": kept.map(\.description), "bundlesAdded": addedBundles.map(\.description),
                    "bundlesDropped": dropped.map(\.description), "downloadBytes": download,
                ], schema: JSONSchemas.diff)
        } else {
            terminal.line("\(old.mapVersion) → \(new.mapVersion)")
            terminal.line("regions: \(added.count) added, \(removed.count) removed, \(changed.count) changed")
            for id in added { terminal.line("  + \(id)") }
            for id in removed { terminal.line("  - \(id)") }
            for id in changed { terminal.line("  ~ \(id)") }
            terminal.line("bundles: \(kept.count) kept, \(addedBundles.count) added, \(dropped.count) dropped")
            terminal.line("a device downloads \(ByteCount.format(download)) (\(download) bytes) to go from old to new")
        }
        try ReportFiles.write(report(old: old, new: new, added: Set(addedBundles), download: download), arguments: arguments, terminal: terminal)
        return 0
    }

    /// What a device downloads per region of the new side: the bundles it lists that the old side
    /// lacks (a bundle two regions list counts at the first by id).
    static func report(old: Side, new: Side, added: Set<BundleDigest>, download: Int64) -> SizeReport {
        var counted = Set<BundleDigest>()
        let regions = new.regions.keys.sorted().map { id -> SizeReport.Region in
            var parts: [String: SizeReport.Part] = [:]
            for digest in new.regions[id]!.sorted() where added.contains(digest) && counted.insert(digest).inserted {
                let kind = new.kinds[digest] ?? "other"
                parts[kind, default: SizeReport.Part(kind: kind, onDisk: 0, download: 0)].download &+= new.bundleSizes[digest] ?? 0
            }
            return SizeReport.Region(
                id: id.rawValue, parent: new.parents[id]?.rawValue, name: new.names[id] ?? id.rawValue,
                parts: parts.values.sorted { $0.kind < $1.kind })
        }
        let changed = new.regions.keys.filter { old.regions[$0] != nil && old.regions[$0] != new.regions[$0] }.count
        return SizeReport(
            kind: "diff", title: "Update \(old.mapVersion) → \(new.mapVersion)",
            summary: [
                ["from", old.mapVersion.rawValue], ["to", new.mapVersion.rawValue],
                ["regions changed", "\(changed)"], ["new bundles", "\(added.count)"],
                ["a device downloads", ByteCount.format(download)],
            ],
            measures: [.download], regions: regions)
    }
}
