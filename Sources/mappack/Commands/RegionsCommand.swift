import Foundation
import MapBuild
import MapFormat

/// `mappack regions CATALOG`: the region tree with localized names and subtree sizes.
enum RegionsCommand {
    static func run(_ raw: [String], terminal: Terminal) throws -> ExitCode {
        let arguments = try Arguments(raw, verb: Verbs.regions)
        let location = try arguments.expect(["catalog"])[0]
        // A line while the catalog downloads, and its retries, as in a build.
        let catalogProgress = CatalogProgress(terminal: terminal)
        defer { catalogProgress.finish() }
        let tree = try CatalogSource.load(try Arguments.catalogURL(location))
        catalogProgress.finish()
        let language = arguments.option(Verbs.lang)
        let blockSize = Int64(try arguments.int(Verbs.Regions.blockSize, range: 512...(1 << 20)) ?? 4096)
        let filter = arguments.option(Verbs.Regions.filter)?.lowercased()
        var rows: [(depth: Int, id: RegionID)] = []
        // Depth first, parents before children, sorted: with a stack, not recursion.
        var pending: [(depth: Int, id: RegionID)] = tree.roots.reversed().map { (0, $0) }
        while let next = pending.popLast() {
            rows.append(next)
            pending.append(contentsOf: tree.children(of: next.id).reversed().map { (next.depth + 1, $0) })
        }
        if let filter {
            rows = rows.filter { row in
                let region = tree.region(row.id)!
                return row.id.rawValue.lowercased().contains(filter) || region.names.values.contains { $0.lowercased().contains(filter) }
            }
        }
        let records = rows.map { row -> (depth: Int, region: CatalogRegion, name: String, children: Int, download: Int64, onDisk: Int64?) in
            let region = tree.region(row.id)!
            let bundles = tree.subtreeBundles(row.id)
            return (
                row.depth, region, region.name(in: language), tree.children(of: row.id).count, tree.downloadSize(bundles),
                tree.sizeOnDisk(bundles, blockSize: blockSize)
            )
        }
        if terminal.json {
            for r in records {
                terminal.record(
                    RegionRecord(
                        id: r.region.id.rawValue, parent: r.region.parent?.rawValue, name: r.name, depth: r.depth, children: r.children,
                        cities: r.region.cities ?? [], downloadBytes: r.download, sizeOnDiskInBytes: r.onDisk, released: r.region.released))
            }
            return .success
        }
        let asTree = arguments.flag(Verbs.Regions.tree)
        var table = TextTable([("REGION", .left), (asTree ? "ID" : "NAME", .left), ("CHILDREN", .right), ("DOWNLOAD", .right), ("ON DISK", .right)])
        for r in records {
            table.add([
                asTree ? String(repeating: "  ", count: r.depth) + r.name : r.region.id.rawValue, asTree ? r.region.id.rawValue : r.name,
                String(r.children), ByteCount.format(r.download), r.onDisk.map(ByteCount.format) ?? "?",
            ])
        }
        terminal.line(table.text)
        return .success
    }
}
