import Foundation
import MapBuild
import MapFormat
import MapStore

/// The store verbs that look at or change what is installed, one function each.
extension StoreCommand {
    /// `store install --image PATH`: the first start.
    static func install(_ context: Context) async throws -> ExitCode {
        _ = try context.arguments.required(Verbs.Store.installImage, by: context.verb)
        let store = try await context.open()
        report(store, context: context)
        return ExitCode(ok: store.initialStatus == .ok)
    }

    /// `store status`: MapStore.open reads the state database only (an app's start must be quick);
    /// a status check also looks at every installed file: presence and size, and SHA-256 with --full.
    static func status(_ context: Context) async throws -> ExitCode {
        let store = try await context.open()
        var status = store.initialStatus
        if status == .ok, !context.arguments.flag(Verbs.Store.full), try await !waitFor({ try await store.verify(full: false) }).isEmpty {
            status = .corrupted
        }
        report(store, status: status, context: context)
        return ExitCode(ok: status == .ok)
    }

    /// `store repair`.
    static func repair(_ context: Context) async throws -> ExitCode {
        let store = try await context.open()
        // What `status` would say: open reads the state database only, so damaged files show
        // as ok there; repair's "was" must not contradict the status that sent the user here.
        var before = store.initialStatus
        if before == .ok, try await !waitFor({ try await store.verify(full: false) }).isEmpty { before = .corrupted }
        let result = try await waitFor { try await store.repair() }
        let terminal = context.terminal
        if terminal.json {
            terminal.event(
                RepairedEvent(
                    before: before.rawValue, status: result.status.rawValue, storage: result.storage.path, actions: result.actions.map(\.description))
            )
        } else {
            for action in result.actions { terminal.note(action.description) }
            terminal.line("\(StoreMessages.words(for: result.status)): \(result.storage.path) (was \(StoreMessages.words(for: before)))")
        }
        return .success
    }

    /// `store regions`.
    static func regions(_ context: Context) async throws -> ExitCode {
        let store = try await context.open()
        let regions = try store.regions(language: context.arguments.option(Verbs.lang))
        let terminal = context.terminal
        if terminal.json {
            for region in regions {
                terminal.record(
                    StoreRegionRecord(
                        id: region.id.rawValue, name: region.name, sizeOnDiskInBytes: region.sizeOnDiskInBytes, state: region.state.rawValue,
                        mapVersion: region.mapVersion.rawValue, bytesIn: region.bytesLocation.rawValue,
                        freedByDeletingInBytes: region.freedByDeletingInBytes))
            }
        } else if let base = store.baseImage {
            // In place: where each region's bytes are, and what deleting it frees (nothing for the base's).
            var table = TextTable([
                ("REGION", .left), ("NAME", .left), ("ON DISK", .right), ("HELD IN", .left), ("DELETE FREES", .right), ("STATE", .left),
            ])
            for region in regions {
                let held =
                    switch region.bytesLocation {
                    case .storage: "storage"
                    case .base: "base"
                    case .baseAndStorage: "base+storage"
                    }
                table.add([
                    region.id.rawValue, region.name, ByteCount.format(region.sizeOnDiskInBytes), held,
                    ByteCount.format(region.freedByDeletingInBytes), region.state.rawValue,
                ])
            }
            terminal.line(table.text)
            terminal.line(
                base.path.visible
                    + ": read-only base, used in place; deleting a region held there hides it and frees nothing "
                    + "(base+storage: the storage's copies are read instead of the base's)")
        } else {
            var table = TextTable([("REGION", .left), ("NAME", .left), ("ON DISK", .right), ("STATE", .left)])
            for region in regions {
                table.add([region.id.rawValue, region.name, ByteCount.format(region.sizeOnDiskInBytes), region.state.rawValue])
            }
            terminal.line(table.text)
        }
        return .success
    }

    /// `store delete ID...`.
    static func delete(_ context: Context) async throws -> ExitCode {
        let names = context.arguments.positionals
        guard !names.isEmpty else { throw UsageError(message: "mappack store delete needs region ids") }
        let store = try await context.open()
        let ids = names.map { RegionID($0) }
        try await waitFor { try await store.deleteRegions(ids) }
        if context.terminal.json {
            context.terminal.event(StoreRegionsEvent(event: "deleted", regions: names, storage: store.storage.path))
        } else {
            context.terminal.line("deleted \(names.joined(separator: " "))")
        }
        return .success
    }

    /// `store verify`.
    static func verify(_ context: Context) async throws -> ExitCode {
        let store = try await context.open()
        let full = !context.arguments.flag(Verbs.Store.quick)
        let problems = try await waitFor { try await store.verify(full: full) }
        let terminal = context.terminal
        if terminal.json {
            for problem in problems { terminal.event(ProblemEvent(detail: problem.description)) }
            terminal.event(StoreVerifyDoneEvent(ok: problems.isEmpty, storage: store.storage.path, problems: problems.count))
        } else {
            for problem in problems { terminal.error(problem.description) }
            terminal.line(problems.isEmpty ? "ok: \(store.storage.path)" : "FAILED: \(problems.count) problem\(problems.count == 1 ? "" : "s")")
        }
        return ExitCode(ok: problems.isEmpty)
    }

    /// `store cache size | clear | limit BYTES`.
    static func cache(_ context: Context) async throws -> ExitCode {
        let words = context.arguments.positionals
        let terminal = context.terminal
        switch words.first {
        case "size":
            let store = try await context.open()
            let size = try store.computeCacheSize()
            let entries = try store.cacheEntryCount()
            if terminal.json {
                terminal.record(StoreCacheRecord(bytes: size, entries: entries))
            } else {
                terminal.line("\(size) bytes (\(ByteCount.format(size))), \(entries) entries")
            }
        case "clear":
            let store = try await context.open()
            try store.clearCache()
            if terminal.json {
                terminal.event(CacheClearedEvent(bytes: try store.computeCacheSize()))
            } else {
                terminal.line("cache cleared")
            }
        case "limit":
            guard words.count == 2, let bytes = ByteCount.parse(words[1]) else {
                throw UsageError(message: "mappack store cache limit needs BYTES (e.g. 64MiB)")
            }
            let store = try await context.open()
            try store.setCacheLimit(bytes)
            let now = try store.computeCacheSize()
            if terminal.json {
                terminal.event(CacheLimitEvent(limit: bytes, bytes: now))
            } else {
                terminal.line("cache limit \(ByteCount.format(bytes)); now \(now) bytes")
            }
        default:
            throw UsageError(message: "mappack store cache needs size, clear or limit BYTES")
        }
        return .success
    }

    /// `store available`: the catalog's regions the store does not hold.
    static func available(_ context: Context) async throws -> ExitCode {
        let store = try await context.open()
        let named = try catalogOption(context, store: store)
        if let id = named?.id {
            // One of the store's catalogs by id: its kept copy's regions.
            let rows = try store.availableRegions(language: context.arguments.option(Verbs.lang), catalog: id)
            StoreAvailable(catalog: id, rows: rows, storeVersion: store.mapVersion).print(to: context.terminal)
            return .success
        }
        let given = named?.url
        if let given { try await waitFor { try await store.setCatalogURL(given) } }
        // A remembered catalog is fetched (and, with --trust, checked) only when the kept one offers nothing.
        let check = { (url: URL) async throws in try await waitFor { try await store.setCatalogURL(url) } }
        try await StoreAvailable(
            store: store, catalog: given, language: context.arguments.option(Verbs.lang), storage: context.storage, cache: context.cache,
            check: check
        ).print(to: context.terminal)
        return .success
    }

    /// `store version`.
    static func version(_ context: Context) async throws -> ExitCode {
        let store = try await context.open()
        if context.terminal.json {
            context.terminal.record(
                StoreVersionRecord(
                    report: store.versionReport, storage: store.storage.path, mapVersion: store.mapVersion?.rawValue, imageID: store.imageID))
        } else {
            context.terminal.line(StoreMessages.words(forVersionReport: store.versionReport))
        }
        return .success
    }

    /// The `status` line (or event) of `install` and `status`, with advice when the store is not ok.
    static func report(_ store: MapStore, status: StoreStatus? = nil, context: Context) {
        let status = status ?? store.initialStatus
        var advice = advice(for: status, storage: store.storage.path, cache: context.cache, catalogKnown: store.catalogURL != nil)
        if store.otherProcessWritingAtOpen {
            advice =
                "another process is writing to this storage now; this is the state it last committed"
                + (status == .ok ? "" : " (its work under way shows as \(StoreMessages.words(for: status)))") + "; run status again when it is done"
        }
        let terminal = context.terminal
        if terminal.json {
            terminal.event(
                StoreStatusEvent(
                    status: status.rawValue, storage: store.storage.path, mapVersion: store.mapVersion?.rawValue ?? "", imageID: store.imageID ?? "",
                    advice: advice))
        } else {
            terminal.line("\(StoreMessages.words(for: status)): \(store.storage.path)" + (store.mapVersion.map { " map version \($0)" } ?? ""))
            if let advice { terminal.note(advice) }
        }
    }
}
