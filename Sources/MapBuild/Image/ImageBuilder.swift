import Foundation
import MapFetch
import MapFormat
import MapIO
import Synchronization

/// Builds a preinstall image from a plan: fetch, verify, unpack into a staging folder, measure,
/// write manifest and cache seed, and only then rename the staging folder into place.
package struct ImageBuilder: Sendable {
    package let plan: BuildPlan
    package let options: BuildOptions

    package init(plan: BuildPlan, options: BuildOptions) {
        self.plan = plan
        self.options = options
    }

    /// Runs the build; on failure nothing under the output root looks finished.
    package func run(events: @escaping @Sendable (BuildEvent) -> Void) async throws -> BuildReport {
        do { try plan.checkCapacity() } catch { throw BuildError.plan(error) }
        let root = FileSystem.absolute(options.outputRoot)
        let built = try ImageBuilder.buildTime(epoch: options.sourceDateEpoch, plan: plan)
        let key = BuildStamp.key(
            recipeSource: plan.recipe.source, catalogSHA256: plan.catalogSHA256, epoch: options.sourceDateEpoch,
            formats: plan.recipe.formats, signingKey: options.signingKey?.text)
        if !options.force, let stamp = BuildStamp.upToDate(root: root, imageName: imageName, key: key, checking: { events(.phase(.check)) }) {
            // Nothing to build, but what killed runs left in the output folder still goes: out of
            // the way at once, its files deleted by a child this no-op does not wait for.
            try StagingArea.sweepStale(in: root, inBackground: true)
            events(.phase(.upToDate))
            return ImageBuilder.report(upToDate: stamp, root: root, formats: plan.recipe.formats)
        }
        try FreeSpaceCheck.check(plan, outputRoot: root, cacheRoot: options.cache.root)
        let area = try prepareStaging(.staging)
        let staging = area.path
        do {
            // File lists wait on disk, not in memory, until the manifest is written.
            let spill = try FileRecordSpill(path: staging + "/files.records")
            // Counted from what was verified: reused (--from) and cached bundles cost no download.
            let fetched = Mutex<Int64>(0)
            let counting: @Sendable (BuildEvent) -> Void = { event in
                if case .fetch(.verified(_, let size)) = event { fetched.withLock { $0 += size } }
                if case .chunked(_, let downloaded, _, _, _) = event { fetched.withLock { $0 += downloaded } }
                events(event)
            }
            let unpacked = try await produce(
                plan.bundles, store: area.imageFolder + "/" + ImageManifest.storeFolder, seedScratch: staging + "/seed", spill: spill,
                events: counting)
            var report: BuildReport
            do { report = try finish(staging: area, unpacked: unpacked, built: built, events: events) } catch {
                throw BuildError.diskFull(from: error) ?? error
            }
            report.downloadedBytes = fetched.withLock { $0 }
            do {
                try BuildStamp.write(
                    root: root, imageName: imageName, key: key, summary: report.summary, outputNames: outputNames(),
                    bundles: plan.bundles.count, synced: options.sync)
            } catch {
                // The outputs are in place and whole: a disk that filled now costs the next run a
                // rebuild, not this one a failure after its outputs were published.
                guard case .diskFull(let path, _) = BuildError.diskFull(from: error) else { throw error }
                report.unrecordedStamp = path
            }
            // A finished build leaves nothing of killed runs behind; their deletion ran meanwhile.
            Trash.waitForRemovals(in: root)
            return report
        } catch {
            // Out of the way in one rename; an interrupted build does not wait for its files' deletion.
            area.throwAway()
            // A full disk in any phase (the download cache, the files list beside the staging folder
            // while bundles unpack, an output) is said as one.
            throw BuildError.diskFull(from: error) ?? error
        }
    }

    /// The report of a build that found its outputs up to date.
    private static func report(upToDate stamp: BuildStamp, root: String, formats: [Recipe.OutputFormat]) -> BuildReport {
        let imageName = "\(stamp.summary.name)-\(stamp.summary.mapVersion)"
        return BuildReport(
            imagePath: root + "/" + imageName, packedPath: packedPath(root: root, imageName: imageName, formats: formats),
            outputs: outputs(root: root, imageName: imageName, formats: formats), summary: stamp.summary, downloadedBytes: 0,
            bundles: stamp.bundles ?? 0, upToDate: true)
    }

    /// Where each output of `formats` is published, in publishing order.
    private static func outputs(root: String, imageName: String, formats: [Recipe.OutputFormat]) -> [BuildOutput] {
        Recipe.OutputFormat.allCases.filter(formats.contains).map {
            BuildOutput(format: $0, path: root + "/" + $0.output.publishedName(imageName: imageName))
        }
    }

    /// Where the packed form is published, when the recipe asks for it.
    private static func packedPath(root: String, imageName: String, formats: [Recipe.OutputFormat]) -> String? {
        formats.contains(.tarZst) ? root + "/" + PackedOutput().publishedName(imageName: imageName) : nil
    }

    /// Whether a build of `recipe` over a catalog with exactly `catalogBytes` would find its outputs
    /// up to date, decided before the catalog is decoded or planned (the no-op rebuild's fast path);
    /// the report to give if so. Nil with `force`. When up to date, what killed runs left in the
    /// output folder is removed (as far as it can be: a real build reports what cannot). `checking` is
    /// called before outputs written without syncs in another boot are read back in full.
    package static func upToDate(recipe: Recipe, catalogBytes: Data, options: BuildOptions, checking: () -> Void = {}) -> BuildReport? {
        guard !options.force else { return nil }
        let root = FileSystem.absolute(options.outputRoot)
        let key = BuildStamp.key(
            recipeSource: recipe.source, catalogSHA256: SHA256.digest(catalogBytes), epoch: options.sourceDateEpoch,
            formats: recipe.formats, signingKey: options.signingKey?.text)
        guard let stamp = BuildStamp.upToDate(root: root, key: key, checking: checking) else { return nil }
        _ = try? StagingArea.sweepStale(in: root, inBackground: true)
        return report(upToDate: stamp, root: root, formats: recipe.formats)
    }

    /// The files and folders under the output root a build writes, by name.
    func outputNames() -> [String] {
        plan.recipe.outputs.flatMap { [$0.stampedPath(imageName: imageName)] + $0.companionNames(imageName: imageName) }
    }

    /// `<name>-<mapVersion>`, the image's file name stem.
    var imageName: String { "\(plan.recipe.name)-\(plan.tree.catalog.mapVersion)" }

    /// Makes a fresh staging folder of `kind` (with `image/store`) in the output root, removing what
    /// killed runs left behind.
    func prepareStaging(_ kind: StagingArea.Kind) throws -> StagingArea {
        let root = FileSystem.absolute(options.outputRoot)
        // The catalog and the recipe checked their parts (`PathName`); this guards the joined name.
        guard FileSystem.isPlainName(imageName), !imageName.contains("..") else {
            throw BuildError.output(
                "refusing the image name '\(imageName)': it must be one plain file name (from the recipe's name and the catalog's mapVersion)")
        }
        try FileSystem.makeDirectories(root)
        // Deleted while this build works (`Trash`); a build that succeeds waits for it at its end.
        try StagingArea.sweepStale(in: root, inBackground: true)
        return try StagingArea(for: imageName, kind: kind, in: root).makeFolder(ImageOutputSource.imageEntry + "/store")
    }

    /// Puts `bundles`' files in place: store bundles under `store`, seed-only bundles under
    /// `seedScratch/<hex>`, reusing an earlier image's files (`--from`) where they still match.
    func produce(
        _ bundles: [BuildPlan.PlannedBundle], store: String, seedScratch: String, spill: FileRecordSpill? = nil,
        events: @escaping @Sendable (BuildEvent) -> Void
    ) async throws -> UnpackedBundles {
        let blockSize = plan.recipe.blockSize
        try FileSystem.makeDirectories(store)
        var results = UnpackedBundles()
        var oldImage: ImageReuse?
        if let from = options.fromImage {
            events(.phase(.reuse))
            let reuse: ImageReuse
            do { reuse = try ImageReuse(image: from) } catch { throw BuildError.output("--from \(from): \(error)") }
            oldImage = reuse
            let candidates = bundles.filter { $0.forStore && reuse.holds($0.digest) }
            let copied = try await BlockingWork.map(candidates, width: options.jobs) { bundle in reuse.copy(bundle.digest, into: store) }
            for (bundle, files) in zip(candidates, copied) {
                guard let files else { continue }
                results.insert(try UnpackedBundle(digest: bundle.digest, files: files, blockSize: blockSize, spill: spill))
                events(.reused(bundle.digest, files: files.count))
            }
        }
        // The plan's own array when nothing was reused: a filtered copy of every planned bundle (each
        // with its catalog record) was 1.5 MiB of a cold build's peak at 6 796 bundles.
        let remaining = results.isEmpty ? bundles : bundles.filter { results[$0.digest] == nil }
        // Announced once the reused bundles are known: what is left is fetched or found in the cache.
        events(
            .planned(
                bundles: bundles.count, downloadBytes: remaining.reduce(0) { $0 + ($1.cached ? 0 : $1.info.size) },
                cached: remaining.reduce(0) { $0 + ($1.cached ? 1 : 0) }, reused: results.count))
        let catalogURL = plan.recipe.catalogURL
        let requests = try remaining.map { bundle in
            guard let url = BundleURL.resolve(bundle.info.url, catalog: catalogURL) else {
                throw BuildError.plan(
                    .catalog(.invalid(url: catalogURL, .foreignBundleURL(bundle: bundle.digest, url: bundle.info.url, catalog: catalogURL.shown))))
            }
            return FetchRequest(digest: bundle.digest, url: url, size: bundle.info.size, regions: bundle.regions)
        }
        if options.offline, let away = zip(remaining, requests).first(where: { !$0.0.cached && !$0.1.url.isFileURL }) {
            throw BuildError.offline(bundle: away.0.digest, url: away.1.url)
        }
        if let oldImage, !options.offline {
            try await fetchChunked(remaining, from: oldImage, scratch: seedScratch + ".chunked", events: events)
        }
        let extracted = try await fetchAndUnpack(requests, bundles: remaining, store: store, seedScratch: seedScratch, spill: spill, events: events)
        ZstdDecoder.releasePooledContexts()
        // What the unpacking freed (decoder windows, the pipeline's arrays) goes back before the manifest.
        Allocator.trim()
        guard !results.isEmpty else { return extracted }
        for bundle in remaining { if let unpacked = extracted[bundle.digest] { results.insert(unpacked) } }
        return results
    }

    /// Writes the manifest, cache seed, signature and packed form from the unpacked bundles in
    /// `area`, then renames the results into place in its folder, the output root.
    func finish(
        staging area: StagingArea, unpacked byDigest: UnpackedBundles, built: String,
        events: @escaping @Sendable (BuildEvent) -> Void
    ) throws -> BuildReport {
        let staging = area.path
        let root = area.folder
        let recipe = plan.recipe
        let catalog = plan.tree.catalog
        let seedScratch = staging + "/seed"
        // The store's bundles first, then the seed-only ones, walked in two passes: two filtered
        // copies of the planned bundles (each with its catalog record) and their sum were 2.3 MiB
        // at 6 796 bundles, and a cold build's peak came here.
        let ordered = [true, false].lazy.flatMap { [bundles = plan.bundles] forStore in bundles.lazy.filter { $0.forStore == forStore } }
        try Task.checkCancellation()
        events(.phase(.manifest))
        TestPause.reach(.manifest)
        var bundleRecords: [ImageBundle] = []
        var storeBundles: [UnpackedBundle] = []
        var seedCandidates: [CacheSeedWriter.Candidate] = []
        for bundle in ordered {
            try Task.checkCancellation()
            guard let result = byDigest[bundle.digest] else { throw BuildError.output("bundle \(bundle.digest) was not unpacked") }
            if bundle.forStore {
                storeBundles.append(result)
                bundleRecords.append(
                    ImageBundle(
                        digest: bundle.digest, size: bundle.info.size, url: bundle.info.url,
                        files: result.fileCount, unpackedSize: result.unpackedSize))
            }
            // The seed holds only what the store does not: a bundle installed in `store/` is never
            // copied into it too (the device would hold its files twice).
            if plan.seedSelection.bundles.contains(bundle.digest), !bundle.forStore {
                let region = bundle.regions.first { id in plan.seedSelection.regions.contains { $0.id == id } } ?? bundle.regions.first!
                let folder = seedScratch + "/" + bundle.digest.hex
                seedCandidates += try result.files().map {
                    CacheSeedWriter.Candidate(
                        path: $0.path.string, source: folder + "/" + $0.path.string, size: $0.size, sha256: $0.sha256, region: region,
                        priority: CacheSchema.seedPriority(kind: bundle.info.kind), depth: plan.tree.ancestry(region).count)
                }
            }
        }
        try Task.checkCancellation()
        // What is needed of the store's bundles besides their files, before the list takes them.
        let allocated = Dictionary(storeBundles.map { ($0.digest, $0.allocatedSize) }, uniquingKeysWith: { first, _ in first })
        let sizeOnDisk = storeBundles.reduce(0) { $0 + $1.allocatedSize }
        let storeBytes = storeBundles.reduce(0) { $0 + $1.unpackedSize }
        // Handed over, not copied: the list orders the bundles in place (1 MiB at 6 796 bundles).
        let fileList = try ManifestFileList(consume storeBundles)

        var cacheSeed: ImageCacheSeed?
        if !plan.seedSelection.regions.isEmpty {
            try Task.checkCancellation()
            events(.phase(.cacheSeed))
            TestPause.reach(.cacheSeed)
            let writer = CacheSeedWriter(
                catalog: catalog.catalog, mapVersion: catalog.mapVersion, maxBytes: recipe.cacheSeedMaxBytes,
                regionBundles: Dictionary(
                    plan.seedSelection.regions.map { ($0.id, plan.tree.region($0.id)?.bundles ?? []) }, uniquingKeysWith: { first, _ in first }))
            cacheSeed = try writer.write(
                seedCandidates, to: area.imageFolder + "/" + ImageManifest.cacheSeedFileName, scratch: staging,
                regions: plan.seedSelection.regions.map(\.id))
        }
        seedCandidates = []
        try Task.checkCancellation()
        try FileSystem.removeTree(seedScratch)

        let language = recipe.language
        var regions = plan.selection.regions.map { entry -> ImageRegion in
            let region = plan.tree.region(entry.id)!
            return ImageRegion(
                id: region.id, parent: region.parent, name: region.name(in: language), names: region.names,
                bundles: region.bundles, sizeOnDiskInBytes: 0, center: region.center, bbox: region.bbox,
                cities: region.cities, released: region.released)
        }
        let sizes = ImageManifest.sizesOnDisk(regions: regions, allocatedPerBundle: allocated)
        for index in regions.indices { regions[index].sizeOnDiskInBytes = sizes[regions[index].id] ?? 0 }
        bundleRecords.sort { $0.digest < $1.digest }
        let shell = ImageManifest(
            name: recipe.name, catalog: catalog.catalog, mapVersion: catalog.mapVersion, built: built,
            mappackVersion: MappackVersion.current, blockSize: recipe.blockSize, language: language,
            regions: regions, bundles: bundleRecords, files: [], cacheSeed: cacheSeed)
        let manifestPath = area.imageFolder + "/" + ImageManifest.fileName
        try Task.checkCancellation()
        let imageID = try fileList.writeManifest(shell, to: manifestPath)
        var signature: Data?
        if let key = options.signingKey {
            // Ed25519 signs the whole message at once, so a signed build reads its manifest back.
            let manifestBytes = try ReadableFile.contents(of: manifestPath, limit: Int.max)
            signature = Data((try Ed25519.sign(manifestBytes, privateKey: key.text, path: key.path).base64EncodedString() + "\n").utf8)
            try FileSystem.writeAtomically(signature!, to: area.imageFolder + "/" + ImageManifest.signatureFileName)
            // The same key, in minisign's format, so stock `minisign -V` checks the manifest too. Only
            // in the folder form: a packed image keeps the entries every installed reader accepts.
            let comment = "image:\(imageName)\timageID:\(imageID)\tbuilt:\(built)\tfile:\(ImageManifest.fileName)"
            let minisig = try Minisign.signature(of: manifestBytes, privateKey: key.text, path: key.path, trustedComment: comment)
            try FileSystem.writeAtomically(Data(minisig.utf8), to: area.imageFolder + "/" + ImageManifest.minisignFileName)
        }
        let summary = ImageSummary(
            name: recipe.name, mapVersion: catalog.mapVersion, imageID: imageID, regions: regions.count,
            files: fileList.count, sizeOnDiskInBytes: sizeOnDisk)

        let tree = plan.tree
        let selection = plan.selection
        // A selected region's bundles all go to the store, so `byDigest` finds just the store's
        // bundles for them; a second dictionary of the store's bundles was 2.9 MiB of the peak.
        let storeFiles = byDigest
        var source = ImageOutputSource(
            stagingFolder: staging, imageName: imageName, built: built, cacheSeed: cacheSeed, signature: signature,
            catalog: catalog.catalog, mapVersion: catalog.mapVersion,
            regions: {
                try selection.regions.map { entry in
                    let region = tree.region(entry.id)!
                    let files = try region.bundles.compactMap { storeFiles[$0] }.flatMap { bundle in
                        try bundle.files().map { OutputFile(path: $0.path.string, bundle: bundle.digest) }
                    }
                    return OutputRegion(
                        id: entry.id, broughtBy: entry.broughtBy, name: region.name(in: language), bbox: region.bbox, center: region.center,
                        files: files.sorted { $0.path < $1.path })
                }
            })
        source.sync = options.sync
        source.imageID = imageID
        source.signingKey = options.signingKey
        source.packProgress = { [count = fileList.count] files, bytes in
            events(.packed(files: files, totalFiles: count, bytes: bytes, totalBytes: storeBytes))
        }
        var staged: [(output: any ImageOutput, entry: String)] = []
        for output in recipe.outputs {
            if let phase = output.phase {
                try Task.checkCancellation()
                events(.phase(phase))
                if output is PackedOutput { source.packProgress(0, 0) }
                TestPause.reach(phase)
            }
            staged.append((output, try output.stage(source)))
        }

        // A signal that came during the last output stops the build here, before a phase starts.
        try Task.checkCancellation()
        events(.phase(.publish))
        TestPause.reach(.publish)
        try Task.checkCancellation()
        // Written without syncs (faster); with `--sync`, on disk before a rename shows them, so a power
        // cut leaves a finished-looking output that verifies, or none. Without it the build stamp names
        // the boot, and a run after a reboot reads them back in full before trusting them (`BuildStamp`).
        if options.sync { for (_, entry) in staged { try FileSystem.syncTree(staging + "/" + entry) } }
        try options.gate.enterPublishing()
        for (output, entry) in staged {
            // A companion this build did not write (an unsigned build's signature) goes, rather
            // than stay beside an output it does not match.
            for companion in output.companionNames(imageName: imageName) {
                if FileSystem.exists(staging + "/" + companion) {
                    try ImageBuilder.replace(companion, with: companion, of: area)
                } else {
                    try FileSystem.removeFile(root + "/" + companion)
                }
            }
            try ImageBuilder.replace(output.publishedName(imageName: imageName), with: entry, of: area)
        }
        if options.sync { try FileSystem.syncDirectory(root) }
        try FileSystem.removeTree(staging)
        // A stamp from an earlier build no longer describes these outputs.
        try FileSystem.removeFile(BuildStamp.path(root: root, imageName: imageName))
        return BuildReport(
            imagePath: root + "/" + imageName, packedPath: ImageBuilder.packedPath(root: root, imageName: imageName, formats: recipe.formats),
            outputs: ImageBuilder.outputs(root: root, imageName: imageName, formats: recipe.formats), summary: summary,
            downloadedBytes: plan.downloadBytes, bundles: plan.bundles.count)
    }

    /// Downloads and unpacks as one pipeline: each bundle is unpacked as soon as it is verified
    /// (or found in the cache), while the other downloads continue, so the network and both
    /// cores stay busy. The first failure stops the rest.
    ///
    /// Fetch events put ready bundles straight into a queue that `width` worker threads drain one
    /// bundle after another: no task hop per bundle, so the workers never wait on the scheduler.
    private func fetchAndUnpack(
        _ requests: [FetchRequest], bundles: [BuildPlan.PlannedBundle], store: String, seedScratch: String,
        spill: FileRecordSpill?, events: @escaping @Sendable (BuildEvent) -> Void
    ) async throws -> UnpackedBundles {
        let blockSize = plan.recipe.blockSize
        let folders = FolderCache()
        let cache = options.cache
        // Positions, not copies: a planned bundle carries its whole catalog record.
        let indexByDigest = Dictionary(bundles.indices.map { (bundles[$0].digest, $0) }, uniquingKeysWith: { first, _ in first })
        // Each ready bundle (by position), and whether this run just downloaded and verified it (else
        // it was cached before and its bytes are checked again while they are unpacked).
        let ready = BlockingQueue<(index: Int, fresh: Bool)>()
        let state = PipelineState(count: bundles.count)
        @Sendable func enqueue(_ digest: BundleDigest, fresh: Bool) {
            guard let index = indexByDigest[digest], state.start(index) else { return }
            ready.push((index, fresh))
        }
        let fetcher = BundleFetcher(cache: options.cache, jobs: options.jobs)
        let remote = options.remoteCache
        let fetch = Task { () throws in
            do throws(FetchError) {
                // Each bundle is then at `cache.path(for:)`; a map of the paths is not kept.
                try await fetcher.fill(
                    requests, remote: remote,
                    events: { event in
                        events(.fetch(event))
                        switch event {
                        case .verified(let digest, _): enqueue(digest, fresh: true)
                        case .alreadyCached(let digest, _): enqueue(digest, fresh: false)
                        default: break
                        }
                    }, remoteEvents: { events(.remote($0)) })
                ready.close()
            } catch {
                ready.close(discarding: true)
                throw BuildError.diskFull(from: error) ?? BuildError.fetch(error)
            }
        }
        let width = max(1, min(options.jobs, ProcessInfo.processInfo.activeProcessorCount))
        do {
            // The fetch runs in its own task; cancelling the build must reach it and the workers too.
            try await withTaskCancellationHandler {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<width {
                        group.addTask {
                            try await BlockingPool.run {
                                while let (index, fresh) = ready.pop() {
                                    let bundle = bundles[index]
                                    do {
                                        let done = try ImageBuilder.unpack(
                                            bundle, from: cache, recheck: !fresh, store: store, seedScratch: seedScratch,
                                            blockSize: blockSize, spill: spill, folders: folders, events: events)
                                        state.finished(done, at: index)
                                    } catch {
                                        state.failed(error)
                                        ready.close(discarding: true)
                                        fetch.cancel()
                                    }
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            } onCancel: {
                fetch.cancel()
                ready.close(discarding: true)
            }
            if let failure = state.failure { throw failure }
            try Task.checkCancellation()
        } catch {
            fetch.cancel()
            _ = try? await fetch.value
            throw error
        }
        _ = try await fetch.value
        let unpacked = state.takeResults()
        var results = UnpackedBundles(capacity: bundles.count)
        for (bundle, result) in zip(bundles, unpacked) {
            // Reported neither verified nor cached: the fetcher must have failed, which `fetch.value` threw.
            guard let result else { throw BuildError.output("bundle \(bundle.digest) was not fetched") }
            results.insert(result)
        }
        return results
    }

    /// What the unpacking workers share: bundles started, results, the first failure, each by the
    /// bundle's position in the list. Arrays rather than a set and a dictionary keyed by digest,
    /// which at 6 796 bundles held 3.4 MiB of a cold build's peak (mostly empty buckets).
    private final class PipelineState: Sendable {
        private let started: Mutex<[Bool]>
        private let outcome: Mutex<(results: [UnpackedBundle?], failure: (any Error)?)>

        init(count: Int) {
            started = Mutex([Bool](repeating: false, count: count))
            outcome = Mutex(([UnpackedBundle?](repeating: nil, count: count), nil))
        }

        /// True the first time the bundle at `index` is seen.
        func start(_ index: Int) -> Bool {
            started.withLock { seen in
                defer { seen[index] = true }
                return !seen[index]
            }
        }
        func finished(_ bundle: UnpackedBundle, at index: Int) { outcome.withLock { $0.results[index] = bundle } }
        func failed(_ error: any Error) { outcome.withLock { if $0.failure == nil { $0.failure = error } } }
        var failure: (any Error)? { outcome.withLock { $0.failure } }
        /// Each bundle's result by position (nil where it was not unpacked); the state keeps none.
        func takeResults() -> [UnpackedBundle?] {
            outcome.withLock { state in
                defer { state.results = [] }
                return state.results
            }
        }
    }

    /// Unpacks one cached bundle into the store (or, for seed-only bundles, a scratch folder); with
    /// `recheck` (it was in the cache before this run), its bytes are checked against the digest again
    /// as they stream through.
    private static func unpack(
        _ bundle: BuildPlan.PlannedBundle, from cache: DownloadCache, recheck: Bool, store: String, seedScratch: String,
        blockSize: Int64, spill: FileRecordSpill?, folders: FolderCache,
        events: @Sendable (BuildEvent) -> Void
    ) throws -> UnpackedBundle {
        let destination = bundle.forStore ? store : seedScratch + "/" + bundle.digest.hex
        if !folders.contains(destination) {
            try FileSystem.makeDirectories(destination)
            folders.insert(destination)
        }
        // No early writeback, even with `--sync`: one `syncfs` of the staged tree before its rename
        // makes it durable, and starting writeback per file (303k `sync_file_range` calls on the large
        // world) cost more than it overlapped: `--sync` took 13.0 s with it, 10.6 s without (run O, P).
        var extractor = SafeExtractor(limits: .declared(unpackedSize: bundle.info.unpackedSize, files: bundle.info.files), writeback: .none)
        // Each worker's files are written by a second thread while it decodes the next ones: a
        // worker waiting in the kernel (the journal, a folder's lock) no longer stops its decoding.
        extractor.pipelined = true
        let archive = cache.path(for: bundle.digest)
        let files: [ExtractedFile]
        do throws(ArchiveError) {
            files = try extractor.extract(archive: archive, into: destination, expectedDigest: recheck ? bundle.digest.sha256 : nil, folders: folders)
        } catch {
            if case .digestMismatch = error {
                try? cache.evict(bundle.digest)
                throw BuildError.damagedInCache(bundle: bundle.digest, path: archive, reason: error)
            }
            if case .io(let fileError) = error, fileError.isOutOfSpace {
                throw BuildError.diskFull(path: fileError.path, bundle: bundle.digest)
            }
            if case .io(let fileError) = error, fileError.code == EEXIST {
                throw BuildError.pathInTwoBundles(path: String(fileError.path.dropFirst(destination.count + 1)), bundles: [bundle.digest])
            }
            throw BuildError.bundleRejected(bundle: bundle.digest, regions: bundle.regions, reason: error)
        }
        events(.unpacked(bundle.digest, files: files.count))
        // A failure to record the list (the staging disk) is the build's, not the bundle's.
        return try UnpackedBundle(digest: bundle.digest, files: files, blockSize: blockSize, spill: spill)
    }

    /// Renames `entry` of `staging` (the staging folder itself when nil) to the output `name` in the
    /// output root, replacing what was there, so readers see the old or the new one, never a mix
    /// (`StagingArea.commit`; the caller fsyncs the root). `name` must be one plain name: the renames
    /// run relative to the root's descriptor, so nothing outside it is ever renamed or removed,
    /// whatever a catalog's map version or a recipe's name spelled.
    static func replace(_ name: String, with entry: String?, of staging: StagingArea) throws {
        guard FileSystem.isPlainName(name) else {
            throw BuildError.output(
                "refusing to replace '\(staging.folder)/\(name)': an output must be one plain name directly in the output folder \(staging.folder)")
        }
        try staging.commit(entry, as: name, sync: false)
    }

    /// The build time, exactly `YYYY-MM-DDTHH:MM:SSZ` (`UTCTime`): from `SOURCE_DATE_EPOCH`, else the
    /// catalog's release time, never the clock, so a build is a function of its inputs. A `released`
    /// in another ISO 8601 spelling (an offset, fractions, a date alone) is written in the one form;
    /// one that is not a time is refused (`releasedNotATime`), not copied into the manifest.
    static func buildTime(epoch: Int?, plan: BuildPlan) throws(BuildError) -> String {
        if let epoch {
            // The CLI bounds SOURCE_DATE_EPOCH to 1970-9999 (`CommandClock`); a library caller gets the bounds.
            let date = min(max(Date(timeIntervalSince1970: TimeInterval(epoch)), Date(timeIntervalSince1970: 0)), UTCTime.latest)
            return UTCTime.format(date)!
        }
        guard let released = plan.tree.catalog.released else { return "1970-01-01T00:00:00Z" }
        guard let built = UTCTime.normalised(released) else {
            throw .releasedNotATime(
                catalog: plan.recipe.catalogURL.shown, released: released)
        }
        return built
    }
}
