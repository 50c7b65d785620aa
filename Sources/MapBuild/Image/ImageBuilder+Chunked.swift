import Foundation
import MapFetch
import MapFormat
import MapIO

/// `mappack build --from OLD_IMAGE` over a chunked catalog (issue 21): a changed bundle whose
/// previous version the old image holds is assembled from the old files' chunks and range
/// requests for the rest, and enters the download cache verified; the usual fetch then finds it
/// there. Any bundle this cannot do is downloaded whole as before.
extension ImageBuilder {
    func fetchChunked(_ bundles: [BuildPlan.PlannedBundle], from old: ImageReuse, scratch: String,
                      events: @escaping @Sendable (BuildEvent) -> Void) async throws {
        let cache = options.cache
        let catalogURL = plan.recipe.catalogURL
        let newLists = Dictionary(plan.tree.catalog.regions.map { ($0.id, $0.bundles) }, uniquingKeysWith: { first, _ in first })
        let newDigests = Set(plan.tree.catalog.bundles.keys)
        var work: [(bundle: BuildPlan.PlannedBundle, url: URL, chunked: ChunkedBundle, seeds: [BundleDigest])] = []
        for bundle in bundles where !bundle.cached && !cache.contains(bundle.digest) {
            guard let chunked = bundle.info.chunked, let url = BundleURL.resolve(chunked.url, catalog: catalogURL) else { continue }
            let seeds = Self.previousVersions(of: bundle, newLists: newLists, newDigests: newDigests, old: old)
            if !seeds.isEmpty { work.append((bundle, url, chunked, seeds)) }
        }
        guard !work.isEmpty else { return }
        events(.phase("chunked"))
        try FileSystem.makeDirectories(scratch)
        defer { try? FileSystem.removeTree(scratch) }
        let curl = CurlMulti(connectionsPerHost: max(1, min(options.jobs, 8)))
        defer { curl.shutdown() }
        let fetcher = ChunkedFetch(cache: cache, scratch: scratch)
        let width = max(1, min(options.jobs, ProcessInfo.processInfo.activeProcessorCount * 2))
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            func start() {
                guard next < work.count else { return }
                let item = work[next]
                next += 1
                group.addTask {
                    let seedTar = scratch + "/\(item.bundle.digest.hex).seed.tar"
                    defer { try? FileSystem.removeFile(seedTar) }
                    let outcome: Result<ChunkedFetch.Outcome, ChunkedFetch.Fallback>
                    do {
                        try Self.writeSeed(item.seeds, from: old, to: seedTar)
                        outcome = await fetcher.fetch(item.bundle.digest, size: item.bundle.info.size, url: item.url, chunked: item.chunked,
                                                      seedTar: seedTar, curl: curl)
                    } catch {
                        outcome = .failure(ChunkedFetch.Fallback(bundle: item.bundle.digest, url: item.url, reason: "\(error)", downloaded: 0))
                    }
                    try Task.checkCancellation()
                    switch outcome {
                    case .success(let done):
                        events(.chunked(item.bundle.digest, downloaded: done.downloaded, reused: done.reused, size: done.size, fallback: nil))
                    case .failure(let fallback):
                        events(.chunked(item.bundle.digest, downloaded: fallback.downloaded, reused: 0, size: item.bundle.info.size,
                                        fallback: fallback.reason))
                    }
                }
            }
            for _ in 0..<width { start() }
            while try await group.next() != nil { start() }
        }
    }

    /// The old image's bundles that `bundle` replaces: for each of its regions, the old bundle at
    /// the same place in the region's list when the lists have the same length, else every old
    /// bundle of the region that the new catalog no longer has.
    static func previousVersions(of bundle: BuildPlan.PlannedBundle, newLists: [RegionID: [BundleDigest]], newDigests: Set<BundleDigest>,
                                 old: ImageReuse) -> [BundleDigest] {
        var seeds: [BundleDigest] = []
        for region in bundle.regions {
            guard let oldList = old.bundlesByRegion[region], let newList = newLists[region] else { continue }
            let replaced = oldList.filter { !newDigests.contains($0) && old.holds($0) }
            if oldList.count == newList.count, let index = newList.firstIndex(of: bundle.digest), replaced.contains(oldList[index]) {
                seeds.append(oldList[index])
            } else {
                seeds += replaced
            }
        }
        var seen = Set<BundleDigest>()
        return seeds.filter { seen.insert($0).inserted }
    }

    /// A plain tar of the `seeds`' files from the old store, laid out as the publisher lays out a
    /// bundle (folders before their files, sorted paths, fixed metadata), so unchanged stretches
    /// compress to the same chunks. Links are not followed: the tar holds only store files.
    static func writeSeed(_ seeds: [BundleDigest], from old: ImageReuse, to path: String) throws {
        let files = seeds.flatMap { old.filesByBundle[$0] ?? [] }.sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
        let writer = try ArchiveWriter(path: path, mtime: 0, compressed: false)
        var folders = Set<String>()
        for file in files {
            let parts = file.path.split(separator: "/").dropLast()
            var folder = ""
            for part in parts {
                folder += folder.isEmpty ? String(part) : "/" + part
                if folders.insert(folder).inserted { try writer.addDirectory(folder) }
            }
            let source = old.store + "/" + file.path
            guard let status = try FileSystem.status(source), status.isRegular else { continue }
            try writer.addFile(file.path, from: source, size: status.size)
        }
        try writer.finish()
    }
}
