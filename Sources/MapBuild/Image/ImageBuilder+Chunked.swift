import Foundation
import MapFetch
import MapFormat
import MapIO

/// `mappack build --from OLD_IMAGE` over a chunked catalog (issue 21): a changed bundle whose
/// previous version the old image holds is assembled from the old files' chunks and range
/// requests for the rest, and enters the download cache verified; the usual fetch then finds it
/// there. Any bundle this cannot do is downloaded whole as before.
extension ImageBuilder {
    func fetchChunked(
        _ bundles: [BuildPlan.PlannedBundle], from old: ImageReuse, scratch: String,
        events: @escaping @Sendable (BuildEvent) -> Void
    ) async throws {
        let cache = options.cache
        let catalogURL = plan.recipe.catalogURL
        let seeds = ChunkedSeeds(store: old.store, filesByBundle: old.filesByBundle, bundlesByRegion: old.bundlesByRegion)
        let newLists = Dictionary(plan.tree.catalog.regions.map { ($0.id, $0.bundles) }, uniquingKeysWith: { first, _ in first })
        let newDigests = Set(plan.tree.catalog.bundles.keys)
        var jobs: [ChunkedSeeds.Job] = []
        for bundle in bundles where !bundle.cached && !cache.contains(bundle.digest) {
            guard let chunked = bundle.info.chunked, let url = BundleURL.resolve(chunked.url, catalog: catalogURL) else { continue }
            let previous = seeds.previousVersions(of: bundle.digest, regions: bundle.regions, newLists: newLists, newDigests: newDigests)
            if !previous.isEmpty {
                jobs.append(ChunkedSeeds.Job(digest: bundle.digest, size: bundle.info.size, url: url, chunked: chunked, seeds: previous))
            }
        }
        guard !jobs.isEmpty else { return }
        events(.phase(.chunked))
        let width = max(1, min(options.jobs, ProcessInfo.processInfo.activeProcessorCount * 2))
        try await seeds.fetch(jobs, cache: cache, scratch: scratch, width: width) { job, outcome in
            switch outcome {
            case .success(let done):
                events(.chunked(job.digest, downloaded: done.downloaded, reused: done.reused, size: done.size, fallback: nil))
            case .failure(let fallback):
                events(.chunked(job.digest, downloaded: fallback.downloaded, reused: 0, size: job.size, fallback: fallback.reason))
            }
        }
    }
}
