import MapFormat

/// `source.json`, the contract with `mappack publish`: the region tree, each bundle folder's kind,
/// and which bundles changed against the base version.
struct SourceDocument: Encodable, Sendable {
    /// The format tag this writer produces.
    static let format = "mappack-source/1"

    /// One region entry.
    struct Region: Encodable, Sendable {
        let id: RegionID
        let parent: RegionID?
        let names: [String: String]
        let center: [Double]?
        let bbox: [Double]?
        let cities: [String]?
        let bundles: [String]

        private enum CodingKeys: String, CodingKey { case id, parent, names, center, bbox, cities, bundles }

        // `parent` is required even at the roots, so it is written as an explicit null, while the
        // optional geometry and cities are left out when absent.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            if let parent { try container.encode(parent, forKey: .parent) } else { try container.encodeNil(forKey: .parent) }
            try container.encode(names, forKey: .names)
            try container.encodeIfPresent(center, forKey: .center)
            try container.encodeIfPresent(bbox, forKey: .bbox)
            try container.encodeIfPresent(cities, forKey: .cities)
            try container.encode(bundles, forKey: .bundles)
        }
    }

    /// One bundle folder's description.
    struct Bundle: Encodable, Sendable {
        let kind: String
    }

    let format: String
    let catalog: String
    let mapVersion: String
    let released: String
    let regions: [Region]
    let bundles: [String: Bundle]
    let changed: [String]

    /// The document for `tree` written with `options`.
    init(tree: WorldTree, options: WorldOptions) {
        format = SourceDocument.format
        catalog = options.catalog
        mapVersion = options.mapVersion
        released = options.released
        regions = tree.regions.map { region in
            Region(
                id: RegionID(region.id), parent: region.parent.map { RegionID($0) }, names: region.names, center: region.center,
                bbox: region.bbox, cities: region.cities, bundles: region.bundles)
        }
        bundles = Dictionary(uniqueKeysWithValues: tree.bundles.map { ($0.name, Bundle(kind: $0.kind)) })
        changed = tree.changed
    }
}
