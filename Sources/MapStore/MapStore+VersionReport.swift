import MapFormat
import MapIO
import Synchronization

/// The one-line version report for logs.
extension MapStore {
    /// One line for logs: the store's map version, image and regions, the cache's version and
    /// entries, and whether they agree (the cache must never be older than the store), e.g.
    /// `offline: store=2026.12.0 image=3f2a9c1b0d4e regions=4 catalog=demo-world | cache=2026.12.0 entries=2 | consistent`.
    /// Never waits for a write in progress.
    public var versionReport: String {
        let snapshot = snapshot
        let version = snapshot.mapVersion
        let image = snapshot.imageID.map { String($0.prefix(12)) } ?? "none"
        let regions = snapshot.regions.count
        let catalog = version == nil ? "?" : (try? listings.manifestFacts(snapshot).catalog) ?? "?"
        let cacheVersion = (try? cacheAccess.with { try $0.mapVersion() }) ?? nil
        let entries = (try? cacheAccess.with { try $0.count() }) ?? 0
        let verdict: String
        switch (version, cacheVersion) {
        case (nil, _): verdict = "no store"
        case (_, nil): verdict = entries == 0 ? "consistent (cache empty)" : "cache version unknown"
        case (let store?, let cache?): verdict = cache < store ? "INCONSISTENT: cache older than store" : "consistent"
        }
        return "offline: store=\(version?.rawValue ?? "none") image=\(image) regions=\(regions) catalog=\(catalog) | "
            + "cache=\(cacheVersion?.rawValue ?? "none") entries=\(entries) | \(verdict)"
    }
}
