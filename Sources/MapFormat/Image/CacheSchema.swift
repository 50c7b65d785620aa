/// The map cache's SQLite schema, shared by the build's cache seed and MapStore's runtime cache.
public enum CacheSchema {
    /// The keys of a cache database's `meta` table, declared once for the seed's writer (the build)
    /// and its readers (MapStore); the raw values are the stored keys.
    public enum MetaKey: String, Sendable, CaseIterable {
        /// `formatTag`.
        case format
        /// The catalog the seed was built from (seeds only).
        case catalog
        /// The map version the entries belong to.
        case mapVersion
        /// The size limit an app set (`MapCache.setLimit`; runtime caches only).
        case limitBytes
        /// The bundles each cached region's entries came from (`encodeBundles`): an update keeps
        /// the entries of a region whose bundles the new catalog lists unchanged, also for a region
        /// the store does not install (a seed's overview), whose bundles no kept manifest records.
        case bundles
    }

    /// The `bundles` meta value: a line per region, sorted, holding the region id and its sorted
    /// bundle digests, separated by spaces (neither holds a space).
    public static func encodeBundles(_ regions: [RegionID: [BundleDigest]]) -> String {
        regions.keys.sorted().map { region in
            ([region.rawValue] + Set(regions[region]!).sorted().map(\.description)).joined(separator: " ")
        }.joined(separator: "\n")
    }

    /// Reads a `bundles` meta value; a line that is not a region id and digests is skipped (its
    /// region's entries then go at the next update, as when nothing is recorded).
    public static func decodeBundles(_ text: String) -> [RegionID: Set<BundleDigest>] {
        var out: [RegionID: Set<BundleDigest>] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 2 else { continue }
            let digests = fields.dropFirst().compactMap { BundleDigest(String($0)) }
            guard digests.count == fields.count - 1 else { continue }
            out[RegionID(String(fields[0])), default: []].formUnion(digests)
        }
        return out
    }

    /// `meta.format` value of a cache database.
    public static let formatTag = FormatTag(name: "mappack-cache", major: 1)

    /// Statements that create an empty cache.
    public static let create = """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE entries (key TEXT PRIMARY KEY, region TEXT NOT NULL, data BLOB NOT NULL,
                              size INTEGER NOT NULL, sha256 BLOB NOT NULL, accessed INTEGER NOT NULL);
        CREATE INDEX entries_accessed ON entries(accessed);
        """

    /// The order a cache seed admits entries in when `maxBytes` cannot hold them all: overview
    /// data first, then tiles, search, routing, anything else; shallower regions before deeper
    /// ones; then by path. Entries that do not fit are skipped, and smaller later ones may still fit.
    public static func seedPriority(kind: String?) -> Int {
        switch kind {
        case "overview": 0
        case "tiles": 1
        case "search": 2
        case "routing": 3
        default: 4
        }
    }
}
