import Foundation
import MapBuild
import MapFetch
import MapFormat
import MapIO
import Synchronization

/// `mappack build RECIPE`.
enum BuildCommand {
    static func run(_ raw: [String], terminal: Terminal) async throws -> ExitCode {
        let arguments = try Arguments(raw, verb: Verbs.build)
        let recipePath = try arguments.expect(["recipe"])[0]
        let jobs = try arguments.int(Verbs.jobs, range: 1...256) ?? BundleFetcher.defaultJobs
        let cache = DownloadCache(root: FileSystem.absolute(arguments.option(Verbs.cache) ?? DownloadCache.defaultRoot()), durable: false)
        try cache.checkOwnership()
        let recipe = try Recipe.load(recipePath)
        let epoch = try CommandClock.sourceDateEpoch()
        let signingKey = try arguments.option(Verbs.sign).map { (path: $0, text: try KeyFiles.read($0)) }
        var options = BuildOptions(
            outputRoot: try Arguments.outputFolder(arguments.option(Verbs.out) ?? "Output", option: Verbs.out), cache: cache, jobs: jobs,
            sourceDateEpoch: epoch, signingKey: signingKey)
        options.fromImage = arguments.option(Verbs.Build.from)
        options.force = arguments.flag(Verbs.Build.force)
        options.sync = arguments.flag(Verbs.Build.sync) || recipe.sync
        options.remoteCache = try remoteCache(arguments)
        let started = Date()
        // One mappack at a time in an output folder, from the up-to-date check to the last rename.
        let madeFolders = OutputLock.missingFolders(options.outputRoot)
        // A line while the catalog downloads, here or in the plan below.
        let catalogProgress = CatalogProgress(terminal: terminal)
        defer { catalogProgress.finish() }
        // Until the build proper starts (the catalog's download, the plan), a signal stops the run at
        // once, saying so, and takes away the output folders this run made, as a failure would:
        // no bundle is fetched yet, and the catalog's kept copy is written whole or not at all.
        let signalSources = Interrupts.watchRun { number in
            catalogProgress.finish()
            terminal.notice("interrupted: stopping (no bundle was fetched yet; nothing was written to the output folder)")
            OutputLock.removeIfMadeAndEmpty(madeFolders)
            let stopped = InterruptedError(signal: number, outcome: "nothing was published; run the same command again")
            let code = ExitCode.interrupted(by: number)
            if terminal.json { terminal.event(FailedEvent(error: stopped.description, exitCode: Int(code.rawValue))) }
            terminal.error(stopped.description)
            exit(code.rawValue)
        }
        defer { withExtendedLifetime(signalSources) {} }
        let outputLock = try await OutputLock.acquire(options.outputRoot, terminal: terminal)
        defer {
            withExtendedLifetime(outputLock) {}
            OutputLock.removeIfMadeAndEmpty(madeFolders)
        }
        // Nothing changed since the last build? Decided from the raw recipe and catalog bytes, before
        // the catalog is decoded and planned.
        let trust = try catalogTrust(arguments, cache: cache)
        let mayBeUpToDate = arguments.option(Verbs.Build.shard) == nil && !options.force
        if mayBeUpToDate || trust != nil {
            // Failing to read the catalog is reported as planning would (an unreachable server is failed work, exit 1).
            // The bytes checked here are the ones the plan uses (prefetch keeps them).
            let catalogBytes: Data
            do {
                catalogBytes = try CatalogSource.prefetch(recipe.catalogURL, cache: cache.root, trust: trust)
                if let trust { try CatalogSource.verifySignature(catalogBytes, url: recipe.catalogURL, trust: trust) }
            } catch { throw PlanError.catalog(error.named(by: recipe)) }
            let checking = {
                catalogProgress.finish()
                if terminal.json {
                    terminal.event(eventObject(.phase(.check)))
                } else {
                    terminal.notice(BuildProgress.checkHeadline)
                }
            }
            if mayBeUpToDate, let report = ImageBuilder.upToDate(recipe: recipe, catalogBytes: catalogBytes, options: options, checking: checking) {
                announce(report, started: started, terminal: terminal)
                return .success
            }
        }
        let plan = try BuildPlan.make(recipe: recipe, cache: cache, keepCatalogBytes: arguments.option(Verbs.Build.shard) != nil)
        catalogProgress.finish()
        // The catalog's bytes and the reader's scratch are gone now; keep them out of the build's peak.
        Allocator.trim()
        for warning in plan.tree.warnings { terminal.note("warning: \(warning)") }
        for warning in RecipeWarnings.excludesOutsideIncludes(recipe: recipe, tree: plan.tree) { terminal.note("warning: \(warning)") }
        let builder = ImageBuilder(plan: plan, options: options)
        let root = FileSystem.absolute(options.outputRoot)
        let imageName = "\(recipe.name)-\(plan.tree.catalog.mapVersion)"
        var descriptions = BuildProgress.Descriptions()
        let seedRegions = plan.seedSelection.regions.count
        descriptions.cacheSeed = "up to \(ByteCount.format(plan.cacheSeedBytes)) from \(seedRegions) region\(seedRegions == 1 ? "" : "s")"
        descriptions.pack = imageName + ".tar.zst"
        descriptions.publish = root
        descriptions.storeBundles = Set(plan.bundles.filter(\.forStore).map(\.digest))
        let progress = BuildProgress(terminal: terminal, descriptions: descriptions)
        if let shardText = arguments.option(Verbs.Build.shard) {
            let parts = shardText.split(separator: "/").compactMap { Int($0) }
            guard parts.count == 2, parts[1] >= 1, parts[1] <= 1024, (1...parts[1]).contains(parts[0]) else {
                throw UsageError(message: "--shard must be I/N with 1 ≤ I ≤ N (e.g. --shard 2/3), not '\(shardText)'")
            }
            let path: String
            do {
                path = try await Interrupts.cancellable(gate: options.gate, progress: progress) {
                    try await builder.runShard(parts[0], of: parts[1]) { event in
                        // Taken before it is said: a signal that follows the event finds the phase it names.
                        progress.take(event)
                        if terminal.json { terminal.event(eventObject(event)) }
                    }
                }
            } catch {
                progress.finish()
                throw error
            }
            progress.finish()
            if terminal.json { terminal.event(ShardDoneEvent(shard: path)) } else { terminal.line("shard \(parts[0])/\(parts[1]): \(path)") }
            return .success
        }
        let report: BuildReport
        do {
            report = try await Interrupts.cancellable(gate: options.gate, progress: progress) {
                try await builder.run { event in
                    // Taken before it is said: a signal that follows the event finds the phase it names.
                    progress.take(event)
                    if terminal.json { terminal.event(eventObject(event)) }
                    switch event {
                    case .remote(.rejected(_, let url, let reason)):
                        terminal.note("warning: remote cache entry \(url) rejected (\(reason)); fetching from the origin instead")
                    case .remote(.uploadFailed(let digest, let reason)):
                        terminal.note("warning: could not upload \(digest.short) to the remote cache: \(reason) (the build goes on)")
                    case .fetch(.retry(let digest, let attempt, let reason, let delay)):
                        terminal.note("retry \(attempt) of \(digest.short) in \(String(format: "%.1f", delay)) s: \(reason)")
                    default: break
                    }
                }
            }
        } catch {
            progress.finish()
            throw error
        }
        progress.finish()
        announce(report, started: started, terminal: terminal)
        return .success
    }

    /// With `--trust PUBKEY`: the key, the ledger in the download cache, and the check clock.
    static func catalogTrust(_ arguments: Arguments, cache: DownloadCache) throws -> CatalogSource.Trust? {
        guard let path = arguments.option(Verbs.Build.trust) else { return nil }
        let text = try KeyFiles.read(path)
        do { _ = try Ed25519.rawPublicKey(text, path: path) } catch { throw UsageError(message: "--trust: \(error)") }
        return CatalogSource.Trust(
            keys: [(path, text)], ledger: CatalogTrustLedger(folder: cache.root + "/catalog-trust"), now: try CommandClock.check()())
    }

    /// The closing line (or `done` event) of a build.
    static func announce(_ report: BuildReport, started: Date, terminal: Terminal) {
        if terminal.json {
            terminal.event(
                BuildDoneEvent(
                    image: report.imagePath, packed: report.packedPath, imageID: report.summary.imageID,
                    mapVersion: report.summary.mapVersion.rawValue, regions: report.summary.regions, upToDate: report.upToDate,
                    files: report.summary.files, bundles: report.bundles, downloadedBytes: report.downloadedBytes,
                    sizeOnDiskInBytes: report.summary.sizeOnDiskInBytes, outputs: outputObjects(report), seconds: Date().timeIntervalSince(started)))
        } else {
            let what = report.upToDate ? "up to date (nothing changed; --force rebuilds)" : "built"
            terminal.line(
                "\(what) \(report.summary.name) \(report.summary.mapVersion): \(report.summary.regions) regions, \(report.summary.files) files, image id \(report.summary.imageID.prefix(16))"
            )
            printOutputs(report, terminal: terminal)
        }
        if let stamp = report.unrecordedStamp {
            terminal.note(
                "warning: the outputs are complete, but the disk filled before this build's record was written (\(stamp)); "
                    + "the next run builds them again instead of finding them up to date")
        }
    }

    /// One line per output, `image: …`, `packed: …`, then `<format>: …` for the others.
    static func printOutputs(_ report: BuildReport, terminal: Terminal) {
        for output in report.outputs {
            let label =
                switch output.format {
                case .directory: "image"
                case .tarZst: "packed"
                default: output.format.rawValue
                }
            terminal.line("\(label): \(output.path)")
        }
    }

    /// The `outputs` of a `done` event: every output's format and path.
    static func outputObjects(_ report: BuildReport) -> [BuildDoneEvent.Output] {
        report.outputs.map { BuildDoneEvent.Output(format: $0.format.rawValue, path: $0.path) }
    }

    /// The remote cache from `--remote-cache` or `MAPPACK_REMOTE_CACHE`, with the optional
    /// `MAPPACK_REMOTE_CACHE_HEADER` (e.g. an Authorization line) that is never printed.
    static func remoteCache(_ arguments: Arguments) throws -> RemoteCache? {
        let environment = ProcessInfo.processInfo.environment
        guard let text = arguments.option(Verbs.Build.remoteCache) ?? environment["MAPPACK_REMOTE_CACHE"], !text.isEmpty else { return nil }
        guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme) else {
            throw UsageError(message: "--remote-cache must be an http:// or https:// URL, not '\(text)'")
        }
        let header = environment["MAPPACK_REMOTE_CACHE_HEADER"].map { [$0] } ?? []
        let readOnly = arguments.flag(Verbs.Build.remoteCacheReadOnly) || environment["MAPPACK_REMOTE_CACHE_READONLY"] == "1"
        return RemoteCache(base: url, headers: header, readOnly: readOnly)
    }

    /// A build's event as its `--json` line.
    static func eventObject(_ event: BuildEvent) -> any JSONEvent {
        switch event {
        case .remote(let remote):
            switch remote {
            case .hit(let digest, let size): BundleSizeEvent(event: "remote-hit", bundle: digest.description, size: size)
            case .miss(let digest, let reason): BundleReasonEvent(event: "remote-miss", bundle: digest.description, reason: reason)
            case .rejected(let digest, let url, let reason): RemoteRejectedEvent(bundle: digest.description, url: url, reason: reason)
            case .uploaded(let digest, let size): BundleSizeEvent(event: "remote-uploaded", bundle: digest.description, size: size)
            case .uploadFailed(let digest, let reason): BundleReasonEvent(event: "remote-upload-failed", bundle: digest.description, reason: reason)
            }
        case .planned(let bundles, let bytes, let cached, let reused):
            PlannedEvent(bundles: bundles, downloadBytes: bytes, cached: cached, reused: reused)
        case .phase(let phase): PhaseEvent(phase: phase.rawValue)
        case .packed(let files, let totalFiles, let bytes, let totalBytes):
            PackProgressEvent(files: files, totalFiles: totalFiles, bytes: bytes, totalBytes: totalBytes)
        case .unpacked(let digest, let files): BundleFilesEvent(event: "bundle-unpacked", bundle: digest.description, files: files)
        case .reused(let digest, let files): BundleFilesEvent(event: "bundle-reused", bundle: digest.description, files: files)
        case .chunked(let digest, let downloaded, let reused, let size, let fallback):
            BundleChunkedEvent(bundle: digest.description, downloaded: downloaded, reused: reused, size: size, fallback: fallback)
        case .fetch(let fetch):
            switch fetch {
            case .started(let digest, let size): BundleSizeEvent(event: "bundle-started", bundle: digest.description, size: size)
            case .progress(let digest, let received, let size): BundleProgressEvent(bundle: digest.description, received: received, size: size)
            case .verified(let digest, let size): BundleSizeEvent(event: "bundle-verified", bundle: digest.description, size: size)
            case .alreadyCached(let digest, let size): BundleSizeEvent(event: "bundle-cached", bundle: digest.description, size: size)
            case .retry(let digest, let attempt, let reason, let delay):
                RetryEvent(bundle: digest.description, attempt: attempt, reason: reason, delay: delay)
            case .failed(let digest, let reason): BundleReasonEvent(event: "failed", bundle: digest.description, reason: reason)
            }
        }
    }
}
