import Foundation
import MapBuild
import MapFormat
import MapIO
import MapStore

/// The store verbs that move or fetch data and show progress as they go, one function each.
extension StoreCommand {
    /// `store move --to DIR`.
    static func move(_ context: Context) async throws -> ExitCode {
        let destination = try context.arguments.required(Verbs.Store.to, by: context.verb)
        let store = try await context.open()
        let terminal = context.terminal
        let ticker = ProgressTicker(terminal: terminal)
        ticker.started("move: \(store.storage.path) → \(destination)")
        do {
            try await waitFor {
                try await store.moveData(to: URL(fileURLWithPath: destination, isDirectory: true)) { fraction in
                    ticker.set("move \(Int(fraction * 100))%")
                }
            }
        } catch {
            ticker.finish()
            throw error
        }
        ticker.finish()
        if terminal.json {
            terminal.event(MovedEvent(storage: store.storage.path))
        } else {
            terminal.line("moved to \(store.storage.path)")
        }
        return .success
    }

    /// `store update [--catalog URL|ID | --all] [--check]`: the catalog `--catalog` names (by URL, or one of
    /// the store's by id), else the image's; `--all`: every catalog of the store, each on its own.
    static func update(_ context: Context) async throws -> ExitCode {
        let store = try await context.open()
        let all = context.arguments.flag(Verbs.Store.all)
        if all, context.arguments.option(Verbs.Store.catalog) != nil {
            throw UsageError(message: "mappack store update: --all updates every catalog; give it or --catalog, not both")
        }
        let named = try catalogOption(context, store: store)
        let (catalog, catalogID) = (named?.url, named?.id)
        let terminal = context.terminal
        if context.arguments.flag(Verbs.Store.check) {
            let infos =
                all
                ? try await waitFor { try await store.checkForUpdates() }
                : [try await waitFor { try await store.checkForUpdate(catalog: catalog, in: catalogID) }]
            let image = try store.catalogs().first?.id
            for info in infos { printCheck(info, terminal: terminal, named: all || info.catalog != image) }
            return .success
        }
        if all { return try await updateAll(store, terminal: terminal) }
        let versionBefore = store.mapVersion
        let catalogsBefore = try store.catalogs()
        let cachedBefore = try store.cacheEntryCount()
        let ticker = ProgressTicker(terminal: terminal)
        ticker.started("update: \(store.storage.path) from \(catalog.map { $0.shown } ?? catalogID.map { "catalog \($0)" } ?? "the store's catalog")")
        do {
            try await waitFor {
                try await store.update(catalog: catalog, in: catalogID) { step in
                    if terminal.json { terminal.event(UpdateProgressEvent(phase: step.phase.rawValue, fraction: step.fraction)) }
                    ticker.set("update: \(step.phase.rawValue) \(Int(step.fraction * 100))%")
                }
            }
        } catch {
            ticker.finish()
            throw error
        }
        ticker.finish()
        if terminal.json {
            let updated =
                try store.catalogs().first { $0.id == catalogID }
                ?? store.catalogs().first { after in
                    catalogsBefore.first { $0.id == after.id }?.mapVersion != after.mapVersion
                }
            terminal.event(
                UpdatedEvent(
                    mapVersion: store.mapVersion?.rawValue, storage: store.storage.path, catalog: updated?.id.rawValue,
                    catalogVersion: updated?.mapVersion?.rawValue))
        } else {
            // An added catalog's update says its own version (the store's is the image catalog's).
            let changed = try store.catalogs().first { after in
                !after.isImageCatalog && catalogsBefore.first { $0.id == after.id }?.mapVersion != after.mapVersion
            }
            if let changed {
                terminal.line("catalog \(changed.id) map version \(changed.mapVersion?.rawValue ?? "?"): \(store.storage.path)")
            } else {
                terminal.line("map version \(store.mapVersion?.rawValue ?? "?"): \(store.storage.path)")
            }
            // The cache keeps the entries of regions the new version left unchanged (the seed's among them).
            if store.mapVersion != versionBefore, cachedBefore > 0 {
                terminal.line("map cache: \(try store.cacheEntryCount()) of \(cachedBefore) entries kept (their regions are unchanged)")
            }
        }
        return .success
    }

    /// One catalog's check: a `--json` record, else a line (`named`: led by the catalog's id).
    private static func printCheck(_ info: UpdateInfo, terminal: Terminal, named: Bool) {
        if terminal.json {
            terminal.record(
                UpdateCheckRecord(
                    catalog: info.catalog.rawValue, status: info.status.rawValue, installedVersion: info.installedVersion.rawValue,
                    availableVersion: info.availableVersion.rawValue, bundlesToFetch: info.bundlesToFetch, updateBytes: info.updateBytes,
                    unsupportedRegions: info.unsupportedRegions.map(\.rawValue)))
            return
        }
        terminal.line(
            (named ? "catalog \(info.catalog): " : "")
                + "\(StoreMessages.words(for: info.status)): installed \(info.installedVersion), catalog \(info.availableVersion), "
                + "\(info.bundlesToFetch) bundles \(ByteCount.format(info.updateBytes)) to fetch"
                + (info.unsupportedRegions.isEmpty ? "" : ", unsupported: \(info.unsupportedRegions.map(\.rawValue).joined(separator: " "))"))
    }

    /// `store update --all`: every catalog with a newer version updated on its own (`MapStore.updateAll`);
    /// a line (or an `updated` event) per catalog; exit 1 when any failed, the others staying updated.
    private static func updateAll(_ store: MapStore, terminal: Terminal) async throws -> ExitCode {
        let ticker = ProgressTicker(terminal: terminal)
        ticker.started("update: \(store.storage.path), every catalog")
        let results: [CatalogUpdateResult]
        do {
            results = try await waitFor {
                try await store.updateAll { catalog, step in
                    if terminal.json { terminal.event(UpdateProgressEvent(phase: step.phase.rawValue, fraction: step.fraction)) }
                    ticker.set("update: catalog \(catalog) \(step.phase.rawValue) \(Int(step.fraction * 100))%")
                }
            }
        } catch {
            ticker.finish()
            throw error
        }
        ticker.finish()
        let versions = Dictionary(uniqueKeysWithValues: try store.catalogs().map { ($0.id, $0.mapVersion?.rawValue) })
        for result in results {
            let version = (versions[result.catalog] ?? nil) ?? "?"
            switch result.outcome {
            case .updated where terminal.json:
                terminal.event(
                    UpdatedEvent(
                        mapVersion: store.mapVersion?.rawValue, storage: store.storage.path, catalog: result.catalog.rawValue,
                        catalogVersion: version))
            case .updated: terminal.line("catalog \(result.catalog) map version \(version): \(store.storage.path)")
            case .upToDate: if !terminal.json { terminal.line("catalog \(result.catalog): up to date at \(version)") }
            case .failed:
                let reason = result.error.map(StoreMessages.text) ?? "unknown error"
                terminal.error("catalog \(result.catalog): update failed: \(reason)")
            }
        }
        return ExitCode(ok: results.allSatisfy { $0.outcome != .failed })
    }

    /// `store download ID... [--catalog URL|ID]`: a URL is first remembered for the store's catalog it
    /// serves (`setCatalogURL`, which refuses a catalog the store does not have); an id names that catalog.
    static func download(_ context: Context) async throws -> ExitCode {
        let names = context.arguments.positionals
        guard !names.isEmpty else { throw UsageError(message: "mappack store download needs region ids") }
        let store = try await context.open()
        let named = try catalogOption(context, store: store)
        if let catalog = named?.url {
            try await waitFor { try await store.setCatalogURL(catalog) }
        }
        let task = try store.download(regions: names.map { RegionID($0) }, catalog: named?.id)
        let terminal = context.terminal
        let ticker = ProgressTicker(terminal: terminal)
        ticker.started("download: \(names.joined(separator: " "))")
        do {
            try await waitFor {
                // One line for all the regions asked for (their bytes summed), not one region's after
                // another's; once every byte is in, the regions are being installed.
                var regions: [RegionID: (received: Int64, total: Int64)] = [:]
                var installing = false
                let count = "\(names.count) region\(names.count == 1 ? "" : "s")"
                for await event in task.events {
                    if case .progress(let region, let received, let total) = event {
                        if terminal.json {
                            terminal.event(DownloadProgressEvent(region: region.rawValue, received: received, total: total))
                        }
                        regions[region] = (received, total)
                        let received = regions.values.reduce(0) { $0 + $1.received }
                        let total = regions.values.reduce(0) { $0 + $1.total }
                        let fetched = regions.count == names.count && regions.values.allSatisfy { $0.received >= $0.total }
                        if !fetched {
                            ticker.set("download \(count) \(ByteCount.format(received))/\(ByteCount.format(total))")
                        } else if !installing {
                            // A step of its own, shown at once (also off a terminal): no line sits at 100 %.
                            installing = true
                            ticker.started("download \(count): installing (\(ByteCount.format(total)) fetched)")
                        }
                    }
                }
                // The command's cancellation (a signal) stops the download keeping what it fetched.
                try await withTaskCancellationHandler {
                    try await task.wait()
                } onCancel: {
                    task.stop()
                }
            }
        } catch {
            ticker.finish()
            throw error
        }
        ticker.finish()
        if terminal.json {
            terminal.event(StoreRegionsEvent(event: "downloaded", regions: names, storage: store.storage.path))
        } else {
            terminal.line("downloaded \(names.joined(separator: " "))")
        }
        return .success
    }
}
