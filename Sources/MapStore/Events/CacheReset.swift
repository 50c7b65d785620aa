import MapFormat

/// What an update removed from the map cache (`StoreEvent.mapCacheReset`): the cache holds data of one
/// map version, so an update that changes the version empties it (the cache seed's entries too) and stamps
/// it with the new version before the switch; entries of the old version are not kept, since the cache
/// cannot tell which of them the new version left unchanged. The app refills it (or imports a seed of the
/// new version with `importCacheSeed(at:)`).
public struct CacheReset: Sendable, Equatable {
    /// Entries removed.
    public let removedEntries: Int
    /// Data bytes of the entries removed.
    public let removedBytes: Int64
    /// The map version the cache is stamped with now.
    public let mapVersion: MapVersion
}
