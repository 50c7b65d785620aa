import Foundation
import MapStore

/// What MapStore's statuses and errors say to a person at the command line. The library's messages are
/// for app developers and name its Swift calls (`repair()`) and status cases (`interruptedOperation`);
/// here they become words and `mappack store` commands.
enum StoreMessages {
    /// A status in words (`ok`, `empty`, `interrupted work`, …).
    static func words(for status: StoreStatus) -> String {
        switch status {
        case .ok: "ok"
        case .empty: "empty"
        case .interruptedInstall: "interrupted install"
        case .interruptedOperation: "interrupted work"
        case .corrupted: "corrupted"
        case .versionMismatch: "version mismatch"
        }
    }

    /// An update check's verdict in a user's words (the library's `UpdateInfo.Status` names are the SDKs').
    static func words(for status: UpdateInfo.Status) -> String {
        switch status {
        case .upToDate: "up to date"
        case .oldData: "update available"
        case .expiredData: "data expired (past its support window; update)"
        }
    }

    /// `MapStore.versionReport` (a log line in the SDKs' words, `offline: store=… | cache=… | verdict`)
    /// in a user's words: `map data 2026.12.0 (image 3f2a9c1b0d4e, 4 regions, catalog demo-world);
    /// map cache 2026.12.0, 2 entries; consistent`.
    static func words(forVersionReport report: String) -> String {
        let parts = report.dropFirst(report.hasPrefix("offline: ") ? "offline: ".count : 0).components(separatedBy: " | ")
        guard parts.count == 3 else { return report }
        func fields(_ text: String) -> [String: String] {
            Dictionary(
                text.split(separator: " ").compactMap { pair -> (String, String)? in
                    let kv = pair.split(separator: "=", maxSplits: 1)
                    return kv.count == 2 ? (String(kv[0]), String(kv[1])) : nil
                }, uniquingKeysWith: { first, _ in first })
        }
        let store = fields(parts[0])
        let cache = fields(parts[1])
        return "map data \(store["store"] ?? "none") (image \(store["image"] ?? "none"), \(store["regions"] ?? "0") regions, "
            + "catalog \(store["catalog"] ?? "?")); map cache \(cache["cache"] ?? "none"), \(cache["entries"] ?? "0") entries; \(parts[2])"
    }

    /// The library's name of an operation (its Swift function) as the store verb or words a user knows.
    static func words(forOperation operation: String) -> String {
        switch operation {
        case "deleteRegions": "delete"
        case "moveData": "move"
        case "setCatalogURL": "reading the catalog"
        case "checkForUpdate": "the update check"
        case "switchStorage": "switching the storage folder"
        case "importCacheSeed": "the cache seed import"
        case "availableRegions", "regionDetails": "listing the catalog's regions"
        case "computeCacheSize", "cacheEntryCount", "cacheLimit", "clearCache", "setCacheLimit", "cachedData", "storeCachedData": "cache"
        case "verifyInstalled": "verify"
        case "open": "opening the storage"
        default: operation
        }
    }

    /// `error`'s message for the command line: what, where and which `mappack store` command to run.
    static func text(_ error: MapStoreError) -> String {
        let repair = "mappack store repair"
        switch error {
        case .repairNeeded(let status):
            let what =
                switch status {
                case .interruptedInstall: "an install was interrupted; finish it with the image it installed: `\(repair) --image IMAGE`"
                case .corrupted: "installed files or the state do not match; restore them: `\(repair)`"
                case .versionMismatch: "the state is of an unknown format or another map version; `\(repair) --image IMAGE` with the store's image"
                default: "work on it was interrupted; finish or roll it back: `\(repair)`"
                }
            return "the map storage is not usable now (\(words(for: status))): \(what) (with the same --storage and --cache), then try again"
        case .imageNeededForRepair(let reason):
            return "repair needs the preinstalled image: \(reason); offer it: `\(repair) --image IMAGE`"
        case .repairFailed(let problems):
            return "repair could not restore the store: \(problems.prefix(5).map(\.description).joined(separator: "; ")); "
                + "offer the preinstalled image (`\(repair) --image IMAGE`) or let the catalog's server be reached, then repair again"
        case .io(let operation, let path, let reason):
            return "\(path): \(words(forOperation: operation)) failed: \(reason); check the storage folder (access, free space) and retry, "
                + "or run `\(repair)` if `mappack store status` reports a problem"
        case .local(let path, let code, let regions, let bundle, let reason):
            return MapStoreError.local(path: path, errno: code, regions: regions, bundle: bundle, reason: plainOperation(reason)).description
        case .noCatalogURL:
            return "no catalog URL is known for this storage; pass --catalog URL"
        case .unknownRegion(let id):
            return "region '\(id)' is neither installed nor being downloaded; list installed regions with `mappack store regions`"
        case .unknownCatalogRegion(let id):
            return "region '\(id)' is not in the catalog; list the regions it offers with `mappack store available`"
        case .updateRequired(let store, let catalog):
            return
                "the catalog is map version \(catalog) but the store holds \(store); update the store (`mappack store update`) before downloading regions"
        case .outOfSpace:
            return error.description.replacingOccurrences(of: "(moveData(to:))", with: "(`mappack store move --to DIR`)")
        case .busy(let operation, let reason):
            return "\(words(forOperation: operation)) cannot run now: \(reason)"
        case .unknownCatalog(let catalog, let url, let catalogs):
            let have = "this store's catalogs are \(catalogs.joined(separator: ", ")) (`mappack store catalogs`)"
            guard let url = url?.absoluteString else { return "the store has no catalog '\(catalog)'; \(have)" }
            return "the catalog at \(url) is '\(catalog)', which is not one of this store's catalogs; nothing was changed; "
                + "\(have); add it: `mappack store catalogs add \(url)`"
        case .catalogInUse(let catalog, let regions) where !regions.isEmpty:
            return "catalog '\(catalog)' still has regions on the device (\(regions.map(\.rawValue).joined(separator: ", "))); "
                + "delete them first (`mappack store delete \(regions.map(\.rawValue).joined(separator: " "))`), then remove the catalog"
        case .catalogAlreadyAdded(let catalog, let location):
            let url = location.absoluteString
            return "the catalog at \(url) is '\(catalog)', which this store has already; to read it from there, "
                + "pass `--catalog \(url)` to `mappack store download` or `mappack store update`"
        case .catalogRegionClash(let region, let catalogs):
            return "region '\(region)' is offered by catalog '\(catalogs.first ?? "?")' and by catalog '\(catalogs.dropFirst().first ?? "?")'; "
                + "a store addresses a region by its id, so two catalogs may not share one; nothing was changed; remove one of them "
                + "(`mappack store catalogs remove ID`) or ask the publisher for distinct ids"
        case .regionsOfSeveralCatalogs(let regions, let catalogs):
            return "regions \(regions.map(\.rawValue).joined(separator: ", ")) are of several catalogs (\(catalogs.joined(separator: ", "))); "
                + "download each catalog's regions with their own `mappack store download … --catalog ID`"
        default:
            return error.description
        }
    }

    /// A reason that starts with the library's operation name (`deleteRegions: …`), with the words instead.
    private static func plainOperation(_ reason: String) -> String {
        guard let colon = reason.firstIndex(of: ":") else { return reason }
        let operation = String(reason[..<colon])
        guard !operation.contains(" ") else { return reason }
        return words(forOperation: operation) + reason[colon...]
    }
}
