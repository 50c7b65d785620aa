import MapFormat

/// `shard.json`: what one `mappack import --shard I/N` wrote, for `mappack import --merge`. An
/// unsharded import writes the same record (as shard 1 of 1) in its staging folder and composes
/// `source.json` from it, so a merge of N shards gives the same bytes.
struct ImportShardRecord: Codable, Sendable {
    /// Major 2: shards take runs of the tile order, and several may write pieces of one bundle.
    static let formatTag = FormatTag(name: "mappack-import-shard", major: 2)
    static let fileName = "shard.json"

    /// One bundle folder this shard wrote: the whole bundle, or its piece of a `tiles.db` whose
    /// tiles span several shards' runs (the merge joins the pieces).
    struct Bundle: Codable, Sendable {
        var kind: String
        /// The regions that list it.
        var regions: [RegionID]
    }

    /// What the shard saw and placed.
    struct Counts: Codable, Sendable {
        /// Tiles of the tileset.
        var tiles: Int
        /// Tiles of this shard's run that it looked at exactly (near a region's box).
        var examined: Int
        /// Tiles written into this shard's bundles.
        var placed: Int
        /// Tiles this shard examined that meet no region (left out).
        var outside: Int
        /// Places written into this shard's search databases.
        var places: Int
    }

    var format: String
    var shard: Int
    var shards: Int
    /// SHA-256 over the inputs and options; every shard of one import has the same.
    var inputs: String
    var catalog: String
    var mapVersion: MapVersion
    /// Every region, in the boundaries' feature order, with no bundles yet.
    var regions: [SourceWorld.Region]
    var bundles: [String: Bundle]
    var counts: Counts
    /// When the imported data was made (`source.json`'s `released`, which a build stamps as its time):
    /// `SOURCE_DATE_EPOCH` when set, else the newest modification time of the inputs. Absent in
    /// records of older versions.
    var released: String?
}
