import Foundation
import MapBuild
import MapFormat
import MapStore
import Synchronization

/// `mappack store VERB --storage S --cache C`: drives MapStore on folders as a device would.
enum StoreCommand {
    /// One store verb: its arguments and what it does, declared once for the usage text, the man
    /// page, completions and "did you mean".
    struct Subverb: Sendable {
        let name: String
        let arguments: String
        let summary: String
    }

    static let subverbs: [Subverb] = [
        Subverb(
            name: "install", arguments: "--image PATH [--full] [--trust PUBKEY]",
            summary: "first start: validate and install a preinstall image (with --trust every file is hashed; the image must be signed; "
                + "--trust PUBKEY with any verb: images and catalogs must be signed by it)"),
        Subverb(
            name: "status", arguments: "[--image PATH] [--full] [--trust PUBKEY]",
            summary: "the storage's status: its state, then every installed file's presence and size (with --full also SHA-256 and the signature)"),
        Subverb(
            name: "repair", arguments: "[--image PATH] [--trust PUBKEY]",
            summary: "finish or roll back interrupted work, rebuild a lost state, restore the kept manifest and files "
                + "(from the image, validated first, the download cache or the catalog's server)"),
        Subverb(name: "regions", arguments: "[--lang L]", summary: "installed regions"),
        Subverb(name: "delete", arguments: "ID...", summary: "delete regions (and their installed descendants)"),
        Subverb(
            name: "verify", arguments: "[--quick] [--trust PUBKEY]", summary: "check the kept manifest (and its signature) and the installed files"),
        Subverb(name: "cache", arguments: "size | clear | limit BYTES", summary: "the map cache's size; empty it; cap it"),
        Subverb(name: "move", arguments: "--to DIR", summary: "move the persistent storage"),
        Subverb(name: "update", arguments: "[--catalog URL] [--check]", summary: "update to the catalog's newer map version (--check: only report)"),
        Subverb(name: "download", arguments: "ID... [--catalog URL]", summary: "download more regions from the store's catalog"),
        Subverb(name: "available", arguments: "[--lang L] [--catalog URL]", summary: "catalog regions not installed"),
        Subverb(name: "version", arguments: "", summary: "one-line map version report (store and cache)"),
    ]

    static let usage: String = {
        let heads = subverbs.map { $0.name + ($0.arguments.isEmpty ? "" : " " + $0.arguments) }
        let width = min(44, heads.map(\.count).max() ?? 0)
        let lines = zip(subverbs, heads).map { verb, head in
            "  " + head + String(repeating: " ", count: max(1, width - head.count + 2)) + verb.summary
        }
        return "usage: mappack store <verb> --storage DIR --cache DIR [options]\n\n" + lines.joined(separator: "\n")
            + "\n\nexit codes: 0 ok, 1 not ok or the work failed, 2 bad usage"
    }()

    /// The store's verbs, as `mappack help --json` lists them.
    static let verbs = subverbs.map(\.name)

    static func run(_ raw: [String], terminal: Terminal) throws -> Int32 {
        guard let verb = raw.first else { throw UsageError(message: usage) }
        if ["help", "--help", "-h"].contains(verb) {
            terminal.line(Help.verb(Verbs.named("store")!))
            return 0
        }
        guard verbs.contains(verb) else {
            let suggestion = Spelling.nearest(to: verb, among: verbs).map { "; did you mean '\($0)'?" } ?? ""
            throw UsageError(message: "unknown store verb '\(verb)'\(suggestion)\n" + usage)
        }
        let arguments = try Arguments(Array(raw.dropFirst()), verb: Verbs.named("store")!)
        guard let storage = arguments.option("storage"), let cache = arguments.option("cache") else {
            throw UsageError(message: "mappack store \(verb) needs --storage DIR and --cache DIR")
        }
        let image = arguments.option("image").map { PreinstalledImage(url: URL(fileURLWithPath: $0)) }
        let trusted = try arguments.option("trust").map { [try KeyFiles.read($0)] } ?? []
        let now = try CommandClock.check()
        // A write waits while another process (an app, another mappack) writes the same storage; say so once.
        let said = Atomic<Bool>(false)
        MapStore.waitingForOtherProcess.withLock { hook in
            hook = { folder in
                guard !said.exchange(true, ordering: .relaxed) else { return }
                terminal.note("waiting for another process using \(folder)… (this one goes on when it is done)")
            }
        }
        let options = MapStore.Options(fullValidation: arguments.flag("full"), trustedPublicKeys: trusted, now: now)
        let open = { () throws -> MapStore in
            try waitFor {
                try await MapStore.open(
                    storage: URL(fileURLWithPath: storage, isDirectory: true), cache: URL(fileURLWithPath: cache, isDirectory: true),
                    preinstalled: image, options: options)
            }
        }
        switch verb {
        case "install":
            guard image != nil else { throw UsageError(message: "mappack store install needs --image PATH") }
            let store = try open()
            report(store, terminal: terminal, cache: cache)
            return store.initialStatus == .ok ? 0 : 1
        case "status":
            // MapStore.open reads the state database only (an app's start must be quick); a status
            // check also looks at every installed file: presence and size, and SHA-256 with --full.
            let store = try open()
            var status = store.initialStatus
            if status == .ok, !arguments.flag("full"), try !waitFor({ try await store.verify(full: false) }).isEmpty { status = .corrupted }
            report(store, status: status, terminal: terminal, cache: cache)
            return status == .ok ? 0 : 1
        case "repair":
            let store = try open()
            // What `status` would say: open reads the state database only, so damaged files show
            // as ok there; repair's "was" must not contradict the status that sent the user here.
            var before = store.initialStatus
            if before == .ok, try !waitFor({ try await store.verify(full: false) }).isEmpty { before = .corrupted }
            let result = try waitFor { try await store.repair() }
            if terminal.json {
                terminal.event([
                    "event": "repaired", "before": before.rawValue, "status": result.status.rawValue,
                    "storage": result.storage.path, "actions": result.actions.map(\.description),
                ])
            } else {
                for action in result.actions { terminal.note(action.description) }
                terminal.line("\(StoreMessages.words(for: result.status)): \(result.storage.path) (was \(StoreMessages.words(for: before)))")
            }
            return 0
        case "regions":
            let store = try open()
            let regions = try store.regions(language: arguments.option("lang"))
            if terminal.json {
                for region in regions {
                    terminal.record(
                        [
                            "id": region.id.rawValue, "name": region.name, "sizeOnDiskInBytes": region.sizeOnDiskInBytes,
                            "state": region.state.rawValue, "mapVersion": region.mapVersion.rawValue,
                        ], schema: JSONSchemas.storeRegion)
                }
            } else {
                var table = TextTable([("REGION", .left), ("NAME", .left), ("ON DISK", .right), ("STATE", .left)])
                for region in regions {
                    table.add([region.id.rawValue, region.name, ByteCount.format(region.sizeOnDiskInBytes), region.state.rawValue])
                }
                terminal.line(table.text)
            }
            return 0
        case "delete":
            guard !arguments.positionals.isEmpty else { throw UsageError(message: "mappack store delete needs region ids") }
            let store = try open()
            let ids = arguments.positionals.map { RegionID($0) }
            try waitFor { try await store.deleteRegions(ids) }
            if terminal.json {
                terminal.event(["event": "deleted", "regions": arguments.positionals, "storage": store.storage.path])
            } else {
                terminal.line("deleted \(arguments.positionals.joined(separator: " "))")
            }
            return 0
        case "verify":
            let store = try open()
            let full = !arguments.flag("quick")
            let problems = try waitFor { try await store.verify(full: full) }
            if terminal.json {
                for problem in problems { terminal.event(["event": "problem", "detail": problem.description]) }
                terminal.event(["event": "done", "ok": problems.isEmpty, "store": true, "storage": store.storage.path, "problems": problems.count])
            } else {
                for problem in problems { terminal.error(problem.description) }
                terminal.line(problems.isEmpty ? "ok: \(store.storage.path)" : "FAILED: \(problems.count) problem\(problems.count == 1 ? "" : "s")")
            }
            return problems.isEmpty ? 0 : 1
        case "cache":
            return try cacheVerb(arguments.positionals, store: try open(), terminal: terminal)
        case "move":
            guard let destination = arguments.option("to") else { throw UsageError(message: "mappack store move needs --to DIR") }
            let store = try open()
            let ticker = ProgressTicker(terminal: terminal)
            ticker.started("move: \(store.storage.path) → \(destination)")
            do {
                try waitFor {
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
                terminal.event(["event": "moved", "storage": store.storage.path])
            } else {
                terminal.line("moved to \(store.storage.path)")
            }
            return 0
        case "update":
            let store = try open()
            let catalog = try arguments.option("catalog").map(Arguments.catalogURL)
            if arguments.flag("check") {
                let info = try waitFor { try await store.checkForUpdate(catalog: catalog) }
                if terminal.json {
                    terminal.record(
                        [
                            "status": info.status.rawValue, "installedVersion": info.installedVersion.rawValue,
                            "availableVersion": info.availableVersion.rawValue, "bundlesToFetch": info.bundlesToFetch,
                            "updateBytes": info.updateBytes, "unsupportedRegions": info.unsupportedRegions.map(\.rawValue),
                        ],
                        schema: JSONSchemas.updateCheck)
                    return 0
                }
                terminal.line(
                    "\(info.status.rawValue): installed \(info.installedVersion), catalog \(info.availableVersion), "
                        + "\(info.bundlesToFetch) bundles \(ByteCount.format(info.updateBytes)) to fetch"
                        + (info.unsupportedRegions.isEmpty ? "" : ", unsupported: \(info.unsupportedRegions.map(\.rawValue).joined(separator: " "))"))
                return 0
            }
            let ticker = ProgressTicker(terminal: terminal)
            ticker.started(
                "update: \(store.storage.path) from \(catalog.map { $0.isFileURL ? $0.path : $0.absoluteString } ?? "the store's catalog")")
            do {
                try waitFor {
                    try await store.update(catalog: catalog) { step in
                        if terminal.json { terminal.event(["event": "update-progress", "phase": step.phase.rawValue, "fraction": step.fraction]) }
                        ticker.set("update: \(step.phase.rawValue) \(Int(step.fraction * 100))%")
                    }
                }
            } catch {
                ticker.finish()
                throw error
            }
            ticker.finish()
            if terminal.json {
                terminal.event(["event": "updated", "mapVersion": store.mapVersion?.rawValue ?? NSNull(), "storage": store.storage.path])
            } else {
                terminal.line("map version \(store.mapVersion?.rawValue ?? "?"): \(store.storage.path)")
            }
            return 0
        case "download":
            guard !arguments.positionals.isEmpty else { throw UsageError(message: "mappack store download needs region ids") }
            let store = try open()
            if let catalog = try arguments.option("catalog").map(Arguments.catalogURL) { try waitFor { try await store.setCatalogURL(catalog) } }
            let task = try store.download(regions: arguments.positionals.map { RegionID($0) })
            let ticker = ProgressTicker(terminal: terminal)
            ticker.started("download: \(arguments.positionals.joined(separator: " "))")
            do {
                try waitFor {
                    // One line for all the regions asked for (their bytes summed), not one region's after
                    // another's; once every byte is in, the regions are being installed.
                    var regions: [RegionID: (received: Int64, total: Int64)] = [:]
                    var installing = false
                    let count = "\(arguments.positionals.count) region\(arguments.positionals.count == 1 ? "" : "s")"
                    for await event in task.events {
                        if case .progress(let region, let received, let total) = event {
                            if terminal.json {
                                terminal.event(["event": "download-progress", "region": region.rawValue, "received": received, "total": total])
                            }
                            regions[region] = (received, total)
                            let received = regions.values.reduce(0) { $0 + $1.received }
                            let total = regions.values.reduce(0) { $0 + $1.total }
                            let fetched = regions.count == arguments.positionals.count && regions.values.allSatisfy { $0.received >= $0.total }
                            if !fetched {
                                ticker.set("download \(count) \(ByteCount.format(received))/\(ByteCount.format(total))")
                            } else if !installing {
                                // A step of its own, shown at once (also off a terminal): no line sits at 100 %.
                                installing = true
                                ticker.started("download \(count): installing (\(ByteCount.format(total)) fetched)")
                            }
                        }
                    }
                    try await task.wait()
                }
            } catch {
                ticker.finish()
                throw error
            }
            ticker.finish()
            if terminal.json {
                terminal.event(["event": "downloaded", "regions": arguments.positionals, "storage": store.storage.path])
            } else {
                terminal.line("downloaded \(arguments.positionals.joined(separator: " "))")
            }
            return 0
        case "available":
            let store = try open()
            let given = try arguments.option("catalog").map(Arguments.catalogURL)
            if let given { try waitFor { try await store.setCatalogURL(given) } }
            // A remembered catalog is fetched (and, with --trust, checked) only when the kept one offers nothing.
            let check = { (url: URL) throws in try waitFor { try await store.setCatalogURL(url) } }
            try StoreAvailable(store: store, catalog: given, language: arguments.option("lang"), storage: storage, cache: cache, check: check).print(
                to: terminal)
            return 0
        case "version":
            let store = try open()
            if terminal.json {
                terminal.record(
                    [
                        "report": store.versionReport, "storage": store.storage.path, "mapVersion": store.mapVersion?.rawValue ?? NSNull(),
                        "imageID": store.imageID ?? NSNull(),
                    ], schema: JSONSchemas.storeVersion)
            } else {
                terminal.line(store.versionReport)
            }
            return 0
        default:
            throw UsageError(message: "unknown store verb '\(verb)'\n" + usage)
        }
    }

    /// Runs async store work from the synchronous CLI dispatch and waits for it.
    static func waitFor<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let result = Mutex<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let outcome: Result<T, any Error>
            do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0! }.get()
    }

    private static func cacheVerb(_ words: [String], store: MapStore, terminal: Terminal) throws -> Int32 {
        switch words.first {
        case "size":
            let size = try store.computeCacheSize()
            let entries = try store.cacheEntryCount()
            if terminal.json {
                terminal.record(["bytes": size, "entries": entries], schema: JSONSchemas.storeCache)
            } else {
                terminal.line("\(size) bytes (\(ByteCount.format(size))), \(entries) entries")
            }
        case "clear":
            try store.clearCache()
            if terminal.json {
                terminal.event(["event": "cache-cleared", "bytes": try store.computeCacheSize()])
            } else {
                terminal.line("cache cleared")
            }
        case "limit":
            guard words.count == 2, let bytes = ByteCount.parse(words[1]) else {
                throw UsageError(message: "mappack store cache limit needs BYTES (e.g. 64MiB)")
            }
            try store.setCacheLimit(bytes)
            let now = try store.computeCacheSize()
            if terminal.json {
                terminal.event(["event": "cache-limit", "limit": bytes, "bytes": now])
            } else {
                terminal.line("cache limit \(ByteCount.format(bytes)); now \(now) bytes")
            }
        default:
            throw UsageError(message: "mappack store cache needs size, clear or limit BYTES")
        }
        return 0
    }

    private static func report(_ store: MapStore, status: StoreStatus? = nil, terminal: Terminal, cache: String) {
        let status = status ?? store.initialStatus
        var advice = advice(for: status, storage: store.storage.path, cache: cache, catalogKnown: store.catalogURL != nil)
        if store.otherProcessWritingAtOpen {
            advice =
                "another process is writing to this storage now; this is the state it last committed"
                + (status == .ok ? "" : " (its work under way shows as \(StoreMessages.words(for: status)))") + "; run status again when it is done"
        }
        if terminal.json {
            terminal.event([
                "event": "status", "status": status.rawValue, "storage": store.storage.path,
                "mapVersion": store.mapVersion?.rawValue ?? "", "imageID": store.imageID ?? "", "advice": advice ?? NSNull(),
            ])
        } else {
            terminal.line("\(StoreMessages.words(for: status)): \(store.storage.path)" + (store.mapVersion.map { " map version \($0)" } ?? ""))
            if let advice { terminal.note(advice) }
        }
    }

    /// What to do about a store that is not ok, as a command to run.
    /// With `catalogKnown`, a plain repair can fetch damaged files again; without, it needs the image.
    static func advice(for status: StoreStatus, storage: String, cache: String, catalogKnown: Bool) -> String? {
        let plainRepair = "mappack store repair --storage \(storage) --cache \(cache)"
        let repair = "mappack store repair --image IMAGE --storage \(storage) --cache \(cache)"
        // Not a switch: a status added to MapStore gets the general advice instead of breaking the build.
        if status == .ok || status == .empty { return nil }
        if status == .corrupted {
            if !catalogKnown {
                return "installed files or the kept manifest do not match the state database; restore them from the image they came from: \(repair)"
            }
            return "installed files or the kept manifest do not match the state database; restore them: \(plainRepair) "
                + "(from the download cache or the catalog's server; add --image IMAGE to restore from the image they came from)"
        }
        if status == .interruptedInstall {
            return "an install was interrupted; finish it with the image it installed: \(repair)"
        }
        if status == .interruptedOperation {
            return "work was interrupted; finish or roll it back: \(plainRepair)"
        }
        if status == .versionMismatch {
            return "the state database is of an unknown format, or the image offered has another map version than the store; "
                + "offer the image of the store's version (\(repair)) or update the store (mappack store update)"
        }
        return "the store is not ok (\(StoreMessages.words(for: status))); run \(repair)"
    }
}
