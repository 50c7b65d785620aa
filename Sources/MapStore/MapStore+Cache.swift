import Foundation
import MapFormat

/// The map cache: bounded, least recently used entries evicted first; separate from persistent storage.
extension MapStore {
    /// Bytes of cached data (the quantity the limit bounds).
    public func computeCacheSize() throws(MapStoreError) -> Int64 {
        try MapStoreError.boundary("computeCacheSize", path: storageFolder) {
            try withCache { try $0.size() }
        }
    }

    /// Number of cached entries.
    public func cacheEntryCount() throws(MapStoreError) -> Int {
        try MapStoreError.boundary("cacheEntryCount", path: storageFolder) {
            try withCache { try $0.count() }
        }
    }

    /// Removes every cache entry. Never touches the persistent storage.
    public func clearCache() throws(MapStoreError) {
        try MapStoreError.boundary("clearCache", path: storageFolder) {
            try withCache { try $0.clear() }
        }
    }

    /// The cache's byte limit, nil when unbounded.
    public func cacheLimit() throws(MapStoreError) -> Int64? {
        try MapStoreError.boundary("cacheLimit", path: storageFolder) {
            try withCache { try $0.limit() }
        }
    }

    /// Sets (or with nil removes) the cache's byte limit, evicting least recently used entries down to it.
    public func setCacheLimit(_ bytes: Int64?) throws(MapStoreError) {
        try MapStoreError.boundary("setCacheLimit", path: storageFolder) {
            try withCache { try $0.setLimit(bytes) }
        }
    }

    /// The cached data for `key`, marking it most recently used.
    public func cachedData(for key: String) throws(MapStoreError) -> Data? {
        try MapStoreError.boundary("cachedData", path: storageFolder) {
            try withCache { try $0.data(for: key) }
        }
    }

    /// Caches `data` under `key` as most recently used, then evicts down to the limit.
    public func storeCachedData(_ data: Data, for key: String, region: RegionID? = nil) throws(MapStoreError) {
        try MapStoreError.boundary("storeCachedData", path: storageFolder) {
            try withCache { try $0.put(data, for: key, region: region) }
        }
    }

    /// Imports the cache seed (`cache-seed.sqlite`) at the file URL `seed`, ranked below what is cached
    /// already. Refuses a seed older than the installed map version with `MapStoreError.seedOlderThanStore`.
    /// Returns the number of entries added.
    ///
    /// A seed can hold many megabytes, all copied into the cache database: the import runs on a thread of
    /// its own, under the cache's lock (cache calls wait for it; storage readers do not). A cancellation of
    /// the calling task that arrives before the import starts throws `MapStoreError.cancelled` and adds
    /// nothing; once started, the import (one transaction) runs to its end.
    @discardableResult
    public func importCacheSeed(at seed: URL) async throws(MapStoreError) -> Int {
        try await MapStoreError.boundary("importCacheSeed", path: storageFolder) {
            let version = mapVersion
            let path = seed.storeFolderPath
            return try await CancellationFlag.runBlocking { [self] flag in
                let lease = try holdStorage(cancellation: flag)
                defer { lease.release() }
                return try withCache { cache throws -> Int in
                    try flag.check()
                    return try cache.importSeed(path, storeVersion: version)
                }
            }
        }
    }
}
