import Foundation
import MapFormat
import MapIO

/// What an older version of an image or store offers a chunked update (issue 21): its files by
/// bundle and its regions' bundle lists, to find a changed bundle's previous version and write it
/// as a plain tar for libzck to take chunks from. Used by `build --from` and `MapStore.update`.
package struct ChunkedSeeds: Sendable {
    /// The folder the files' paths are relative to (an image's or a storage's `store`).
    package let store: String
    /// The old files, by bundle.
    package let filesByBundle: [BundleDigest: [ImageFile]]
    /// Each old region's bundles, in the catalog's order.
    package let bundlesByRegion: [RegionID: [BundleDigest]]
    /// A store's read-only base tree when it uses its image in place: a file `store` does not hold is read there.
    package var base: String?

    package init(store: String, filesByBundle: [BundleDigest: [ImageFile]], bundlesByRegion: [RegionID: [BundleDigest]]) {
        self.store = store
        self.filesByBundle = filesByBundle
        self.bundlesByRegion = bundlesByRegion
    }

    /// The old bundles that `digest` (referenced by `regions`) replaces: for each region, the old
    /// bundle at the same place in the region's list when both lists have the same length, else
    /// every old bundle of the region that the new catalog no longer has.
    package func previousVersions(
        of digest: BundleDigest, regions: [RegionID], newLists: [RegionID: [BundleDigest]],
        newDigests: Set<BundleDigest>
    ) -> [BundleDigest] {
        var seeds: [BundleDigest] = []
        for region in regions {
            guard let oldList = bundlesByRegion[region], let newList = newLists[region] else { continue }
            let replaced = oldList.filter { !newDigests.contains($0) && filesByBundle[$0] != nil }
            if oldList.count == newList.count, let index = newList.firstIndex(of: digest), replaced.contains(oldList[index]) {
                seeds.append(oldList[index])
            } else {
                seeds += replaced
            }
        }
        var seen = Set<BundleDigest>()
        return seeds.filter { seen.insert($0).inserted }
    }

    /// A plain tar of the `seeds`' files, laid out as the publisher lays out a bundle (folders
    /// before their files, sorted paths, fixed metadata), so unchanged stretches give the same
    /// chunks. Only regular files are read (a link in the store is left out).
    package func writeSeed(_ seeds: [BundleDigest], to path: String) throws {
        let files = seeds.flatMap { filesByBundle[$0] ?? [] }.sorted { $0.path.string.utf8.lexicographicallyPrecedes($1.path.string.utf8) }
        let writer = try ArchiveWriter(path: path, mtime: 0, compressed: false)
        var folders = Set<String>()
        for file in files {
            let name = file.path.string
            var folder = ""
            for part in name.split(separator: "/").dropLast() {
                folder += folder.isEmpty ? String(part) : "/" + part
                if folders.insert(folder).inserted { try writer.addDirectory(folder) }
            }
            var source = store + "/" + name
            var found = try FileSystem.status(source)
            if found == nil, let base {
                source = base + "/" + name
                found = try FileSystem.status(source)
            }
            guard let status = found, status.isRegular else { continue }
            try writer.addFile(name, from: source, size: status.size)
        }
        try writer.finish()
    }

    /// One bundle a chunked update can try.
    package struct Job: Sendable {
        package let digest: BundleDigest
        package let size: Int64
        package let url: URL
        package let chunked: ChunkedBundle
        package let seeds: [BundleDigest]
        package init(digest: BundleDigest, size: Int64, url: URL, chunked: ChunkedBundle, seeds: [BundleDigest]) {
            self.digest = digest
            self.size = size
            self.url = url
            self.chunked = chunked
            self.seeds = seeds
        }
    }

    /// Runs `jobs` (`width` at a time) into `cache`, each reported to `report` as it ends; the
    /// bundles that worked are in the cache, the others are left to a whole download.
    package func fetch(
        _ jobs: [Job], cache: DownloadCache, scratch: String, width: Int,
        report: @escaping @Sendable (Job, Result<ChunkedFetch.Outcome, ChunkedFetch.Fallback>) -> Void
    ) async throws {
        guard !jobs.isEmpty else { return }
        try FileSystem.makeDirectories(scratch)
        defer { try? FileSystem.removeTree(scratch) }
        let curl = CurlMulti(connectionsPerHost: max(1, min(width, 8)))
        defer { curl.shutdown() }
        let fetcher = ChunkedFetch(cache: cache, scratch: scratch)
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            func start() {
                guard next < jobs.count else { return }
                let job = jobs[next]
                next += 1
                group.addTask {
                    let seedTar = scratch + "/\(job.digest.hex).seed.tar"
                    defer { try? FileSystem.removeFile(seedTar) }
                    let outcome = await fetcher.fetch(
                        job.digest, size: job.size, url: job.url, chunked: job.chunked, seedTar: seedTar,
                        writingSeed: { try self.writeSeed(job.seeds, to: seedTar) }, curl: curl)
                    try Task.checkCancellation()
                    report(job, outcome)
                }
            }
            for _ in 0..<max(1, width) { start() }
            while try await group.next() != nil { start() }
        }
    }
}
