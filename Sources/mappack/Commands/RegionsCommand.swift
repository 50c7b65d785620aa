import Foundation
import MapBuild
import MapFormat

/// `mappack regions CATALOG`: the region tree with localized names and subtree sizes.
enum RegionsCommand {
    static func run(_ raw: [String], terminal: Terminal) throws -> Int32 {
        let arguments = try Arguments(raw, flags: ["json", "tree"], options: ["lang", "filter", "block-size"])
        let location = try arguments.expect(["catalog"])[0]
        let url = location.contains("://") ? URL(string: location)! : URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(location).standardizedFileURL
        let tree = try CatalogSource.load(location.hasPrefix("/") ? URL(fileURLWithPath: location) : url)
        let language = arguments.option("lang")
        let blockSize = Int64(try arguments.int("block-size", range: 512...(1 << 20)) ?? 4096)
        let filter = arguments.option("filter")?.lowercased()
        var rows: [(depth: Int, id: RegionID)] = []
        func visit(_ id: RegionID, depth: Int) {
            rows.append((depth, id))
            for child in tree.children(of: id) { visit(child, depth: depth + 1) }
        }
        for root in tree.roots { visit(root, depth: 0) }
        if let filter {
            rows = rows.filter { row in
                let region = tree.region(row.id)!
                return row.id.rawValue.lowercased().contains(filter) || region.names.values.contains { $0.lowercased().contains(filter) }
            }
        }
        let records = rows.map { row -> (depth: Int, region: CatalogRegion, name: String, children: Int, download: Int64, onDisk: Int64?) in
            let region = tree.region(row.id)!
            let bundles = tree.subtreeBundles(row.id)
            return (row.depth, region, region.name(in: language), tree.children(of: row.id).count, tree.downloadSize(bundles), tree.sizeOnDisk(bundles, blockSize: blockSize))
        }
        if terminal.json {
            for r in records {
                terminal.event(["id": r.region.id.rawValue, "parent": r.region.parent?.rawValue ?? NSNull(), "name": r.name, "depth": r.depth,
                                "children": r.children, "cities": r.region.cities ?? [], "downloadBytes": r.download,
                                "sizeOnDiskInBytes": r.onDisk.map { $0 as any Sendable } ?? NSNull(), "released": r.region.released ?? NSNull()])
            }
            return 0
        }
        let tree_ = arguments.flag("tree")
        let labels = records.map { r in tree_ ? String(repeating: "  ", count: r.depth) + r.name : r.region.id.rawValue }
        let width = min(60, labels.map(\.count).max() ?? 10)
        terminal.line("\("REGION".rightPadded(width))  \(tree_ ? "ID" : "NAME")  CHILDREN  DOWNLOAD  ON DISK")
        for (r, label) in zip(records, labels) {
            let other = tree_ ? r.region.id.rawValue : r.name
            terminal.line("\(label.rightPadded(width))  \(other)  \(String(r.children).leftPadded(3))  \(ByteCount.format(r.download).leftPadded(10))  \((r.onDisk.map(ByteCount.format) ?? "?").leftPadded(10))")
        }
        return 0
    }
}
