import MapFormat

/// What an update did to the map cache (`StoreEvent.mapCacheReset`): the cache holds data of one map
/// version, so an update that changes the version keeps only the entries of regions whose bundles the
/// new version left unchanged (their data is the same bytes in both versions; the cache seed's
/// entries too) and removes the rest, and stamps the cache with the new version before the switch.
/// Entries no region owns (stored with `region: nil`) cannot be told unchanged and go. The app refills
/// what went (or imports a seed of the new version with `importCacheSeed(at:)`).
public struct CacheReset: Sendable, Equatable {
    /// Entries removed.
    public let removedEntries: Int
    /// Data bytes of the entries removed.
    public let removedBytes: Int64
    /// The map version the cache is stamped with now.
    public let mapVersion: MapVersion
    /// Entries kept: their region's bundles are the same in the new version.
    public let keptEntries: Int
    /// Data bytes of the entries kept.
    public let keptBytes: Int64
    /// The catalog whose update this was (a store holds several: `MapStore.catalogs()`); nil when built
    /// by an app with the initializer.
    public internal(set) var catalog: CatalogID?

    /// What an update removed and kept.
    public init(removedEntries: Int, removedBytes: Int64, mapVersion: MapVersion, keptEntries: Int = 0, keptBytes: Int64 = 0) {
        self.removedEntries = removedEntries
        self.removedBytes = removedBytes
        self.mapVersion = mapVersion
        self.keptEntries = keptEntries
        self.keptBytes = keptBytes
    }
}
