/// The phases of a build, a merge and a publish, declared once: `--json`'s `phase` events, the
/// progress lines, the outputs and the test pause (`MAPPACK_TEST_PAUSE_AT`) name them by their raw
/// values, which are what `--json` prints and must not change.
public enum BuildPhase: String, Sendable, CaseIterable {
    /// Before the plan's bundles are known (progress lines only; no event).
    case plan
    /// The last build's stamp matches: nothing is built.
    case upToDate = "up to date"
    /// The last build's outputs were not synced and the machine rebooted since: every byte is read
    /// and checked before they are called up to date (else they are built again).
    case check
    /// `--from`: unchanged bundles are copied from the old image.
    case reuse
    /// `--from` with a chunked catalog: bundles assembled from the old image's chunks and ranges.
    case chunked
    /// Bundles are downloaded, and unpacked as they arrive (progress lines only; no event).
    case fetch
    /// Downloads are done and the last bundles unpack (progress lines only; no event).
    case unpack
    case manifest
    case cacheSeed = "cache seed"
    /// The packed form (`.tar.zst`); also the publish verb's bundle packing.
    case pack
    case mbtiles
    case maplibreOffline = "maplibre-offline"
    case pmtiles
    /// The partition image (`.erofs`), its hash tree and sidecar.
    case erofs
    /// Staged outputs are renamed into the output folder (a `--shard` run has only this phase).
    case publish
    /// `mappack merge`: shards are put together.
    case merge
    /// The publish verb writes the catalog.
    case catalog
}
