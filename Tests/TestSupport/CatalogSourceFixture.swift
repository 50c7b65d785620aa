import Foundation

/// Source folders of small catalogs besides `SourceFixture`'s, for stores that hold several catalogs:
/// `japan` (its own regions and files, two versions), and `clash` (offers `europe`, a region id of the
/// world fixtures).
public enum CatalogSourceFixture {
    /// The regions of the `japan` catalog, sorted.
    public static let japanRegions = ["japan", "japan/osaka", "japan/tokyo"]

    /// Writes the `japan` catalog's source of `version` to `folder`; with `tokyoChanged`, Tokyo's
    /// files get other bytes (an update changes that region alone).
    public static func writeJapan(to folder: String, version: String, tokyoChanged: Bool) throws {
        try write(
            folder, catalog: "japan", version: version,
            regions: [
                ("japan", nil, ["regions/japan/overview.db": 3000]),
                ("japan/tokyo", "japan", ["regions/japan/tokyo/tiles.db": 9000, "regions/japan/tokyo/search.db": 700]),
                ("japan/osaka", "japan", ["regions/japan/osaka/tiles.db": 6000]),
            ],
            changed: tokyoChanged ? ["japan/tokyo"] : [])
    }

    /// Writes the `clash` catalog's source (a root region `europe`) to `folder`.
    public static func writeClash(to folder: String) throws {
        try write(folder, catalog: "clash", version: "2026.11.0", regions: [("europe", nil, ["regions/clash/europe.db": 500])], changed: [])
    }

    /// A source folder for `mappack publish`: one bundle per region (named after it), files of the given
    /// sizes; the regions in `changed` get bytes of their own for `version`.
    public static func write(
        _ folder: String, catalog: String, version: String, regions: [(id: String, parent: String?, files: [String: Int])], changed: Set<String>
    ) throws {
        var rows: [String] = []
        var bundles: [String] = []
        for region in regions {
            let bundle = region.id.replacingOccurrences(of: "/", with: ".")
            for (path, size) in region.files {
                let full = folder + "/bundles/" + bundle + "/" + path
                try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try SourceFixture.bytes(size, seed: changed.contains(region.id) ? path + version : path).write(to: URL(fileURLWithPath: full))
            }
            let parent = region.parent.map { "\"\($0)\"" } ?? "null"
            rows.append("{\"id\":\"\(region.id)\",\"parent\":\(parent),\"names\":{\"en\":\"\(region.id)\"},\"bundles\":[\"\(bundle)\"]}")
            bundles.append("\"\(bundle)\":{\"kind\":\"tiles\"}")
        }
        let source = """
            {"format":"mappack-source/1","catalog":"\(catalog)","mapVersion":"\(version)","released":"2026-11-20T00:00:00Z",
             "regions":[\(rows.joined(separator: ","))],"bundles":{\(bundles.joined(separator: ","))}}
            """
        try Data(source.utf8).write(to: URL(fileURLWithPath: folder + "/source.json"))
    }
}
