import Foundation
import MapStore
import Synchronization

/// The first start of an app with preinstalled offline maps, written as an app would write it against
/// `MapStore`: open with the image, watch the store's events, list the regions on offer with their sizes,
/// download one with a pause and a resume, check for an update and run it, print the states, verify the files.
@main
enum StoreDemo {
    static func main() async {
        let arguments: DemoArguments
        do {
            arguments = try DemoArguments.parse(Array(CommandLine.arguments.dropFirst()))
        } catch {
            if let message = error.message { FileHandle.standardError.write(Data("StoreDemo: \(message)\n".utf8)) }
            FileHandle.standardError.write(Data((DemoArguments.usage + "\n").utf8))
            exit(error.message == nil ? 0 : 2)
        }
        do {
            try await run(arguments)
        } catch {
            // MapStoreError is a LocalizedError: its description says what failed and what to do.
            FileHandle.standardError.write(Data("StoreDemo: \(error.localizedDescription)\n".utf8))
            exit(1)
        }
    }

    static func run(_ arguments: DemoArguments) async throws(MapStoreError) {
        // 1. First start: install the image shipped with the app (a later start finds it installed).
        print("== open")
        var options = MapStore.Options()
        options.catalogURL = arguments.catalog
        let store = try await MapStore.open(
            storage: URL(fileURLWithPath: arguments.storage), cache: URL(fileURLWithPath: arguments.cache),
            preinstalled: PreinstalledImage(url: URL(fileURLWithPath: arguments.image)), options: options)
        print("status: \(store.initialStatus)")
        if store.initialStatus != .ok {
            let report = try await store.repair()
            print("repaired: \(report.actions.count) action(s)")
        }
        print("map version: \(store.mapVersion?.rawValue ?? "none")")
        printCatalogs(store)
        printInstalled(try store.regions(language: arguments.language))

        // 2. One consumer of the store-wide events: every region state change, whatever made it (a download,
        // an update, a repair, a delete), arrives here in commit order (a UI would update its list from here).
        let events = store.events()
        let watcher = Task {
            for await event in events {
                if let line = describe(event) { print("event: \(line)") }
            }
        }

        // 3. The regions on offer, with what they cost to download and the space they take installed.
        print("== available")
        let offered = try store.availableRegions(language: arguments.language)
        for region in offered {
            print(
                "\(region.id)  \(region.name)  download \(ByteCount.format(region.downloadSizeInBytes))  "
                    + "on disk \(ByteCount.format(region.sizeOnDiskInBytes))  children \(region.children.count)  \(region.state)")
        }

        // 4. Download one region, pausing once bytes arrive and resuming (as a user would with a button).
        let smallest = offered.filter { $0.downloadSizeInBytes > 0 }.min { $0.downloadSizeInBytes < $1.downloadSizeInBytes }
        let wanted: RegionID? = arguments.region.map { RegionID($0) } ?? smallest?.id
        if let wanted {
            print("== download \(wanted)")
            if store.mayBeOutOfSpace(for: [wanted]) { print("warning: \(wanted) may not fit on the storage") }
            let task = try store.download(regions: [wanted])
            var pauseAsked = false
            var lastQuarter = -1
            for await event in task.events {
                switch event {
                case .progress(let id, let received, let total):
                    let quarter = total > 0 ? Int(received * 4 / total) : 4
                    if quarter > lastQuarter {
                        lastQuarter = quarter
                        print("progress: \(id) \(quarter * 25)%")
                    }
                    if !pauseAsked, received > 0, received < total {
                        pauseAsked = true
                        // Refused once the download installs (it then completes): a button would say so.
                        if !task.pause() { print("pause refused: \(id) is installing") }
                    }
                case .stateChanged(let id, .paused):
                    let progress = store.progress(of: id)
                    print("paused: \(id) at \(progress.map { "\($0.receivedBytes)/\($0.totalBytes) bytes" } ?? "unknown")")
                    print("resume: \(id)")
                    task.resume()
                case .stateChanged, .completed, .failed:
                    break
                }
            }
            try await task.wait()
            if !pauseAsked { print("(the download finished before it could be paused)") }
            print("downloaded: \(wanted)")
        } else {
            print("== download: nothing left to download")
        }

        // 5. Ask the server for a newer map version and install it (only changed bundles are fetched).
        print("== update")
        let info = try await store.checkForUpdate(catalog: arguments.updateCatalog)
        let cost = "\(info.bundlesToFetch) bundles, \(ByteCount.format(info.updateBytes))"
        print("check: \(info.status.rawValue) \(info.installedVersion) -> \(info.availableVersion), \(cost)")
        // The check moved the catalog the next update reads, not the one downloads resolve against.
        printCatalogs(store)
        if info.availableVersion > info.installedVersion {
            let phases = PhaseLog()
            // No catalog named: the update reads the one just checked.
            try await store.update { progress in phases.note(progress.phase) }
            print("updated: \(store.mapVersion?.rawValue ?? "none")")
            printCatalogs(store)
        }

        // 6. Where things stand.
        print("== regions")
        printInstalled(try store.regions(language: arguments.language))

        // 7. Check every installed file in full (SHA-256). That reads every byte, so it is async: it runs on
        // threads of its own, blocks no reader, and stops between files when its task is cancelled (a UI
        // runs it in a task it cancels when the user leaves the screen).
        print("== verify")
        let problems = try await store.verify(full: true)
        for problem in problems { print("problem: \(problem)") }
        print(problems.isEmpty ? "verify: ok" : "verify: \(problems.count) problem(s); call repair()")
        // Let the event consumer print what is queued before the program ends.
        try? await Task.sleep(for: .milliseconds(300))
        watcher.cancel()
    }

    /// The installed catalog (downloads resolve against it) and the checked one (the next update reads it).
    static func printCatalogs(_ store: MapStore) {
        print("catalog installed: \(store.catalogURL?.absoluteString ?? "none")")
        print("catalog checked: \(store.checkedCatalogURL?.absoluteString ?? "none")")
    }

    static func printInstalled(_ regions: [InstalledRegion]) {
        for region in regions { print("installed: \(region.id)  \(region.name)  \(region.state)") }
    }

    /// One line per store event worth showing; progress is shown by the flow itself.
    static func describe(_ event: StoreEvent) -> String? {
        switch event {
        case .regionStateChanged(let id, let state): "\(id) \(state)"
        case .downloadFinished(let ids): "download finished \(ids.map(\.rawValue).joined(separator: ","))"
        case .downloadFailed(let ids, let error): "download failed \(ids.map(\.rawValue).joined(separator: ",")): \(error.localizedDescription)"
        case .updateAvailable(let info): "update available \(info.availableVersion)"
        case .updateStarted(let info): "update started \(info.installedVersion) -> \(info.availableVersion)"
        case .updateDeferred(let info, let reason): "update to \(info.availableVersion) deferred (\(reason))"
        case .updateDeclined(let info, let reason): "update to \(info.availableVersion) declined (\(reason))"
        case .updateFinished(let version): "update finished \(version)"
        case .mapCacheReset(let reset):
            "map cache for \(reset.mapVersion): \(reset.keptEntries) entries kept (unchanged), \(reset.removedEntries) removed"
        case .updateFailed(let error): "update failed: \(error.localizedDescription)"
        case .updateCheckFailed(let error): "update check failed: \(error.localizedDescription)"
        case .availableRegionsChanged: "regions on offer changed"
        case .updatePaused: "update paused"
        case .storageMoved(let url): "storage moved to \(url.path)"
        case .storageSwitched(let url, let status): "storage switched to \(url.path) (\(status))"
        case .networkChanged(let change):
            "network \(change.metered ? "metered" : "unmetered"): paused \(change.pausedDownloads.count), resumed \(change.resumedDownloads.count)"
        case .repaired(let report):
            "repaired: \(report.actions.isEmpty ? "nothing to do" : report.actions.map(\.description).joined(separator: ", "))"
        case .progress, .updateProgress, .moveProgress: nil
        }
    }
}

/// Prints each update phase once, as it starts.
final class PhaseLog: Sendable {
    private let seen = Mutex<Set<UpdateProgress.Phase>>([])

    func note(_ phase: UpdateProgress.Phase) {
        if seen.withLock({ $0.insert(phase).inserted }) { print("update phase: \(phase.rawValue)") }
    }
}
