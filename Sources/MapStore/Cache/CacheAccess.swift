import Synchronization

/// The map cache behind a lock of its own, so cache readers never wait for a storage write (an update
/// holds the store's lock for its whole switch). Lock order: the store's lock, then this one, never
/// the other way round.
final class CacheAccess: Sendable {
    /// The cache folder.
    let folder: String
    private let opened = Mutex<MapCache?>(nil)

    init(folder: String) { self.folder = folder }

    /// Runs `body` with the cache database (opened on first use) under the cache's lock.
    func with<T: Sendable>(_ body: (MapCache) throws -> T) throws -> T {
        try opened.withLock { cache throws -> T in
            if let cache { return try body(cache) }
            let made = try MapCache(folder: folder)
            cache = made
            return try body(made)
        }
    }
}
