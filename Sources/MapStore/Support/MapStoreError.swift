import Foundation
import MapFormat
import MapIO

/// Why a MapStore operation was refused or failed.
///
/// Every public MapStore call throws only this type (`throws(MapStoreError)`): failures of the
/// layers below (files, the state database, archives) arrive wrapped in `.local` or `.io` with their
/// description. Each message says what failed, where, and what to do.
///
/// A case that names a URL carries it as `URL`; `description` alone spells it, as `URL.shown` does
/// (a file's path, any other URL whole), so a case reads the same wherever it was thrown. The two
/// cases that name a catalog a person may add (`unknownCatalog`, `catalogAlreadyAdded`) spell it whole
/// (`absoluteString`), as they always have.
///
/// Not exhaustive: later versions add cases. Branch on `code` (a struct, so a `switch` over it has a
/// `default`) or match the cases you handle and end with `default`; never list every case.
public enum MapStoreError: Error, LocalizedError, Sendable, CustomStringConvertible {
    /// The offered image is not a usable mappack image (`reason` says why): damaged, incomplete,
    /// or signed by no trusted key.
    case invalidImage(path: String, reason: String)
    /// What was offered as an image is none: nothing at the path, a folder without `manifest.json`,
    /// a file that is no `.tar.zst`, or a manifest that breaks the format (not JSON, a path that
    /// leaves the store). `mappack verify` calls the same input bad input (exit 2), as the CLI's
    /// install does with this error.
    case notAnImage(path: String, reason: String)
    /// An interrupted operation or corruption must be repaired first.
    case repairNeeded(status: StoreStatus)
    /// `repair()` needs the preinstalled image to restore files or re-install, and none was offered.
    case imageNeededForRepair(reason: String)
    /// Repair ran but the store still does not verify.
    case repairFailed(problems: [StoreProblem])
    /// Nothing is installed.
    case notInstalled
    /// A region id that is not installed.
    case unknownRegion(RegionID)
    /// A cache seed whose map version is older than the store's.
    case seedOlderThanStore(seed: MapVersion, store: MapVersion)
    /// A file that is not a mappack cache database.
    case invalidCacheSeed(path: String, reason: String)
    /// `moveData(to:)` needs an empty or new destination.
    case destinationNotEmpty(path: String)
    /// A file-system or database step failed.
    case io(operation: String, path: String, reason: String)
    /// A failure on this device while fetching or installing: disk full (`errno` ENOSPC), permissions,
    /// a corrupted or unreadable file. Retrying rarely helps until the user frees space or fixes access.
    case local(path: String, errno: Int32?, regions: [RegionID], bundle: BundleDigest?, reason: String)
    /// A failure of the server or the network: HTTP status, timeout, refused or reset connection,
    /// content that does not match the catalog. Retrying later may help.
    case remote(url: URL, httpStatus: Int?, regions: [RegionID], bundle: BundleDigest?, reason: String)
    /// The catalog at `url` was read but is not a usable catalog (`reason`: malformed, sizes that
    /// overflow, names that are no plain names, a compressed copy that does not decompress, …); the
    /// store keeps nothing of it.
    case invalidCatalog(url: URL, reason: CatalogDefect)
    /// The catalog offers an older map version than the installed one; updates never go back.
    case rollbackRefused(installed: MapVersion, offered: MapVersion)
    /// The network policy forbids metered networks and the app says the current one is metered.
    case meteredNetworkDisallowed(regions: [RegionID])
    /// No catalog URL is known: pass one, or set it with `setCatalogURL` or `Options.catalogURL`.
    case noCatalogURL
    /// The catalog is of another map version than the store; update the store before downloading more regions.
    case updateRequired(store: MapVersion, catalog: MapVersion)
    /// A region id the catalog does not have.
    case unknownCatalogRegion(RegionID)
    /// The operation was cancelled (task cancelled or `DownloadTask.cancel()`).
    case cancelled
    /// `operation` cannot run now (`reason` says what is under way and what to do).
    case busy(operation: String, reason: String)
    /// The filesystem holding the storage folder `storage` ran out of space (`path` is where a write
    /// failed, `errno` ENOSPC or EDQUOT, or nil when the image was seen not to fit before writing it).
    case outOfSpace(storage: String, path: String, errno: Int32?)
    /// Trusted keys are configured but the catalog at `url` has no signature (`catalog.json.sig`).
    case catalogUnsigned(url: URL)
    /// The catalog's signature is malformed, by a key not trusted, edited after signing, or for other catalog bytes.
    case catalogSignatureInvalid(url: URL, reason: String)
    /// The catalog's version is lower than the newest this device has seen (a replayed old catalog).
    case catalogRollback(url: URL, seen: Int64, offered: Int64)
    /// The catalog has the version this device saw before, but other bytes.
    case catalogMixAndMatch(url: URL, version: Int64)
    /// The catalog's signature has expired (a frozen mirror, or a wrong device clock).
    case catalogExpired(url: URL, expires: String)
    /// The catalog's signature is for another catalog id than the installed image's lineage.
    case catalogOtherLineage(url: URL, following: String, offered: String)
    /// The catalog's signature resets the version counter without the new key's cosignature.
    case catalogResetRefused(url: URL, reason: String)
    /// `catalog.json.timestamp` names a catalog older than the newest this device has seen (a stale timestamp).
    case catalogTimestampStale(url: URL, seen: Int64, offered: Int64)
    /// `catalog.json.timestamp`'s own counter is below the newest timestamp this device has seen (a replay).
    case catalogTimestampReplayed(url: URL, seen: Int64, offered: Int64)
    /// `catalog.json.timestamp` has expired (a frozen mirror, or a wrong device clock).
    case catalogTimestampExpired(url: URL, expires: String)
    /// The catalog served is not the one `catalog.json.timestamp` names.
    case catalogTimestampMismatch(url: URL, reason: String)
    /// A download or an update would give the store path `path` (a file, or a region id spelled
    /// `region ID`) a second owner: `owners` names the one that has it and the one that would add it
    /// (regions and bundle). Refused before anything changed; the catalog is inconsistent.
    case ownershipConflict(path: String, owners: [String])
    /// `catalog.json.timestamp` at `url` is missing (or could not be read) although this device has
    /// trusted timestamps of this catalog lineage before (a freeze by deletion).
    case catalogTimestampMissing(url: URL)
    /// The store has no catalog of this id (`url`: where it was served); `catalogs` are the store's. Add it
    /// with `addCatalog(url:)`: a catalog never replaces another's regions.
    case unknownCatalog(catalog: String, url: URL?, catalogs: [String])
    /// Two catalogs offer the same region id (the one the store has first, the other second); nothing changed.
    case catalogRegionClash(region: RegionID, catalogs: [String])
    /// The catalog still has installed (or downloading) regions, so it cannot be removed.
    case catalogInUse(catalog: String, regions: [RegionID])
    /// The store has a catalog of this id already (its URL changes with `setCatalogURL`).
    case catalogAlreadyAdded(catalog: String, url: URL)
    /// A download names regions of several catalogs; start one per catalog.
    case regionsOfSeveralCatalogs(regions: [RegionID], catalogs: [String])

    /// Which side a failure is on, so an app can choose between "try again later" and "free space".
    public enum Category: String, Sendable {
        /// This device: disk, permissions, corrupted local files, the store's own state.
        case local
        /// The server or the network.
        case remote
        /// The request itself: unknown region, policy, missing catalog URL, cancelled.
        case request
    }

    /// The side this failure is on.
    public var category: Category {
        switch self {
        case .remote, .invalidCatalog, .catalogUnsigned, .catalogSignatureInvalid, .catalogRollback, .catalogMixAndMatch, .catalogExpired,
            .catalogOtherLineage, .catalogResetRefused, .catalogTimestampStale, .catalogTimestampReplayed, .catalogTimestampExpired,
            .catalogTimestampMissing, .catalogTimestampMismatch, .ownershipConflict:
            .remote
        case .local, .io, .outOfSpace, .repairNeeded, .repairFailed, .imageNeededForRepair, .invalidImage, .invalidCacheSeed: .local
        case .notAnImage, .notInstalled, .unknownRegion, .seedOlderThanStore, .destinationNotEmpty, .rollbackRefused, .meteredNetworkDisallowed,
            .noCatalogURL, .updateRequired, .unknownCatalogRegion, .cancelled, .busy, .unknownCatalog, .catalogRegionClash, .catalogInUse,
            .catalogAlreadyAdded, .regionsOfSeveralCatalogs:
            .request
        }
    }

    public var description: String {
        switch self {
        case .invalidImage(let path, let reason):
            "\(path): not a usable preinstall image: \(reason); offer an intact image (`mappack verify IMAGE` says what is wrong)"
        case .notAnImage(let path, let reason):
            "\(path): not a mappack image: \(reason); offer an image folder or an image .tar.zst made by `mappack build`"
        case .repairNeeded(let status): "the map storage is \(status); call repair() first"
        case .imageNeededForRepair(let reason): "repair needs the preinstalled image: \(reason); offer it with --image / preinstalled:"
        case .repairFailed(let problems):
            "repair could not restore the store: \(problems.prefix(5).map(\.description).joined(separator: "; ")); "
                + "offer the preinstalled image or allow the network (the catalog serves the bundles), then call repair() again"
        case .notInstalled: "no map data is installed in this storage; install a preinstall image first"
        case .unknownRegion(let id): "region '\(id)' is neither installed nor being downloaded; regions() lists the installed ones"
        case .seedOlderThanStore(let seed, let store):
            "cache seed is for map version \(seed), older than the store's \(store); refused: import the seed of map version \(store) or newer"
        case .invalidCacheSeed(let path, let reason): "\(path): not a mappack cache seed: \(reason); import the cache-seed.sqlite of a mappack image"
        case .destinationNotEmpty(let path): "\(path): destination for moveData is not empty; choose a new or empty folder"
        case .io(let operation, let path, let reason):
            "\(path): \(operation) failed: \(reason); check the storage folder (access, free space) and retry, or call repair() if the store reports a problem"
        case .local(let path, _, let regions, let bundle, let reason):
            "local failure\(Self.context(regions, bundle)) at \(path): \(reason); free space or fix access on this device, then retry"
        case .remote(let url, _, let regions, let bundle, let reason):
            "remote failure\(Self.context(regions, bundle)) from \(url.shown): \(reason); retry later (fetched bytes are kept)"
        case .rollbackRefused(let installed, let offered):
            "the catalog offers map version \(offered), older than the installed \(installed); refused (updates never go back): "
                + "check the catalog URL, which must serve map version \(installed) or newer"
        case .meteredNetworkDisallowed(let regions):
            "not downloading\(Self.context(regions, nil)): the network is metered and the network policy disallows metered networks; "
                + "retry on an unmetered network (report it with networkChanged(metered: false)) or set networkPolicy.allowMetered"
        case .noCatalogURL: "no catalog URL is known for this storage; pass --catalog URL (or setCatalogURL / Options.catalogURL)"
        case .updateRequired(let store, let catalog):
            "the catalog is map version \(catalog) but the store holds \(store); update the store (update(catalog:)) before downloading regions"
        case .busy(let operation, let reason): "\(operation) cannot run now: \(reason)"
        case .unknownCatalogRegion(let id): "region '\(id)' is not in the catalog; availableRegions() lists the regions it offers"
        case .cancelled: "cancelled; start the operation again to continue (fetched bytes are kept unless a download was cancelled)"
        case .outOfSpace(let storage, let path, let code):
            "out of space: "
                + (code.map { "the disk holding the map storage \(storage) is full (\(Errno($0)))" }
                    ?? "the image does not fit in the free space of the map storage \(storage)")
                + (path == storage ? "" : " writing \(path)")
                + "; free space on that disk or move the storage to a larger one (moveData(to:)), then try again"
        case .invalidCatalog(let url, let reason):
            "\(url.shown) is not a usable catalog: \(reason); fix or replace the catalog (the store kept its previous one)"
        case .catalogUnsigned(let url): "catalog \(url.shown): \(CatalogTrustError.unsigned)"
        case .catalogSignatureInvalid(let url, let reason): "catalog \(url.shown): \(CatalogTrustError.signatureInvalid(reason: reason))"
        case .catalogRollback(let url, let seen, let offered): "catalog \(url.shown): \(CatalogTrustError.rollback(seen: seen, offered: offered))"
        case .catalogMixAndMatch(let url, let version): "catalog \(url.shown): \(CatalogTrustError.mixAndMatch(version: version))"
        case .catalogExpired(let url, let expires): "catalog \(url.shown): \(CatalogTrustError.expired(expires: expires))"
        case .catalogOtherLineage(let url, let following, let offered):
            "catalog \(url.shown): \(CatalogTrustError.otherLineage(following: following, offered: offered))"
        case .catalogResetRefused(let url, let reason): "catalog \(url.shown): \(CatalogTrustError.epochResetUnproven(reason: reason))"
        case .catalogTimestampStale(let url, let seen, let offered): "\(url.shown): \(CatalogTrustError.timestampStale(seen: seen, offered: offered))"
        case .catalogTimestampReplayed(let url, let seen, let offered):
            "\(url.shown): \(CatalogTrustError.timestampReplayed(seen: seen, offered: offered))"
        case .catalogTimestampExpired(let url, let expires): "\(url.shown): \(CatalogTrustError.timestampExpired(expires: expires))"
        case .catalogTimestampMismatch(let url, let reason): "\(url.shown): \(CatalogTrustError.timestampMismatch(reason: reason))"
        case .ownershipConflict(let path, let owners):
            "the catalog gives \(path) two owners: \(owners.first ?? "?") has it and \(owners.dropFirst().first ?? "?") would add it; "
                + "nothing was changed; the catalog is inconsistent, so ask its publisher for a corrected one"
        case .catalogTimestampMissing(let url): "\(url.shown): \(CatalogTrustError.timestampMissing)"
        case .unknownCatalog(let catalog, let url, let catalogs):
            "\(url.map { "the catalog at \($0.absoluteString) is" } ?? "there is no catalog") '\(catalog)'\(url == nil ? " in this store" : ", which is not one of this store's catalogs")"
                + " (\(catalogs.joined(separator: ", "))); nothing was changed; add it with addCatalog(url:) (mappack store catalogs add URL)"
        case .catalogRegionClash(let region, let catalogs):
            "region '\(region)' is offered by catalog '\(catalogs.first ?? "?")' and by catalog '\(catalogs.dropFirst().first ?? "?")'; "
                + "a store addresses a region by its id, so two catalogs may not share one; nothing was changed; remove one of the catalogs "
                + "(removeCatalog) or ask the publisher for distinct ids"
        case .catalogInUse(let catalog, let regions) where regions.isEmpty:
            "catalog '\(catalog)' is the catalog the store's image came from; a store always keeps it (remove added catalogs only)"
        case .catalogInUse(let catalog, let regions):
            "catalog '\(catalog)' still has regions on the device (\(regions.map(\.rawValue).joined(separator: ", "))); "
                + "delete them first (deleteRegions / mappack store delete), then remove the catalog"
        case .catalogAlreadyAdded(let catalog, let url):
            "the catalog at \(url.absoluteString) is '\(catalog)', which this store has already; change its URL with setCatalogURL "
                + "(mappack store download/update --catalog URL)"
        case .regionsOfSeveralCatalogs(let regions, let catalogs):
            "regions \(regions.map(\.rawValue).joined(separator: ", ")) are of several catalogs (\(catalogs.joined(separator: ", "))); "
                + "download each catalog's regions on their own"
        }
    }

    /// The message (`LocalizedError`): what failed, where, and what to do.
    public var errorDescription: String? { description }

    /// The store's case for a catalog refused by its signature or timestamp check, at `url`.
    static func catalogRefused(_ error: CatalogTrustError, url: URL) -> MapStoreError {
        switch error {
        case .unsigned: return .catalogUnsigned(url: url)
        case .signatureInvalid(let reason): return .catalogSignatureInvalid(url: url, reason: reason)
        case .rollback(let seen, let offered): return .catalogRollback(url: url, seen: seen, offered: offered)
        case .mixAndMatch(let version): return .catalogMixAndMatch(url: url, version: version)
        case .expired(let expires): return .catalogExpired(url: url, expires: expires)
        case .otherLineage(let following, let offered): return .catalogOtherLineage(url: url, following: following, offered: offered)
        case .epochResetUnproven(let reason): return .catalogResetRefused(url: url, reason: reason)
        case .timestampStale(let seen, let offered): return .catalogTimestampStale(url: url, seen: seen, offered: offered)
        case .timestampReplayed(let seen, let offered): return .catalogTimestampReplayed(url: url, seen: seen, offered: offered)
        case .timestampExpired(let expires): return .catalogTimestampExpired(url: url, expires: expires)
        case .timestampMismatch(let reason): return .catalogTimestampMismatch(url: url, reason: reason)
        case .timestampMissing: return .catalogTimestampMissing(url: url)
        }
    }

    private static func context(_ regions: [RegionID], _ bundle: BundleDigest?) -> String {
        var parts: [String] = []
        if !regions.isEmpty { parts.append("region\(regions.count == 1 ? "" : "s") \(regions.map(\.rawValue).joined(separator: ", "))") }
        if let bundle { parts.append("bundle \(bundle.short)") }
        return parts.isEmpty ? "" : " (" + parts.joined(separator: ", ") + ")"
    }
}
