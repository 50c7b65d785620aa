import Foundation
import MapFetch
import MapFormat
import MapIO
import Synchronization

extension MapStore {
    /// Before an update's fetch (issue 21): every bundle to fetch that the catalog offers in zchunk
    /// form and whose previous version is installed is assembled from the installed files' chunks
    /// and range requests, and enters the download cache only verified, where the fetch then finds
    /// it. Whatever cannot be done so is left to the fetch, which downloads it whole as before.
    /// `installed` is the kept manifest the update was planned from (read once, not again here).
    func fetchChunked(_ requests: [FetchRequest], tree: RegionTree, catalogURL: URL, installed manifest: ImageManifest) async {
        // Counted as a fetch (under the store's lock, as `fetch` does): it writes into the download
        // cache, so a move must not start meanwhile.
        let (folder, store, base) = await BlockingPool.value { [self] in
            core.withLock { core in
                runtime.withLock { $0.beginFetch() }
                return (core.downloadFolder, core.layout.store, core.baseStore)
            }
        }
        defer { runtime.withLock { $0.endFetch() } }
        var seeds = ChunkedSeeds(
            store: store, filesByBundle: Dictionary(grouping: manifest.files, by: \.bundle),
            bundlesByRegion: Dictionary(manifest.regions.map { ($0.id, $0.bundles) }, uniquingKeysWith: { first, _ in first }))
        // In place, the files the storage does not hold are the base's.
        seeds.base = base
        let cache = DownloadCache(root: folder)
        let newLists = Dictionary(tree.catalog.regions.map { ($0.id, $0.bundles) }, uniquingKeysWith: { first, _ in first })
        let newDigests = Set(tree.catalog.bundles.keys)
        var jobs: [ChunkedSeeds.Job] = []
        for request in requests where !cache.contains(request.digest) {
            guard let chunked = tree.catalog.bundles[request.digest]?.chunked, let url = BundleURL.resolve(chunked.url, catalog: catalogURL) else {
                continue
            }
            let previous = seeds.previousVersions(of: request.digest, regions: request.regions, newLists: newLists, newDigests: newDigests)
            if !previous.isEmpty {
                jobs.append(ChunkedSeeds.Job(digest: request.digest, size: request.size, url: url, chunked: chunked, seeds: previous))
            }
        }
        try? await seeds.fetch(jobs, cache: cache, scratch: folder + "/chunked", width: 4) { _, _ in }
    }
}
