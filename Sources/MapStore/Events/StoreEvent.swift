import Foundation
import MapFormat

/// What `MapStore.events()` reports, store-wide: every download task's and every update's changes.
///
/// Not exhaustive: later versions announce more. Branch on `kind` (a struct, so a `switch` over it has a
/// `default`) or match the events you handle and end with `default`; never list every case.
public enum StoreEvent: Sendable {
    /// A region changed state (downloading, paused, completed, outdated, available after a cancel or a deletion, …).
    /// Every change, by any operation (a check, a download with its descendants, an update, a repair, a
    /// delete), is sent once, in the order the changes were committed.
    case regionStateChanged(RegionID, RegionState)
    /// Bytes of a region being downloaded (with its descendants), or of an installed region being
    /// updated, on the device so far, of `totalBytes`.
    case progress(RegionID, receivedBytes: Int64, totalBytes: Int64)
    /// A check (the app's or an automatic one) found a newer map version than the installed one.
    case updateAvailable(UpdateInfo)
    /// An update passed its checks and starts fetching (from `installedVersion` to `availableVersion`).
    case updateStarted(UpdateInfo)
    /// An automatic update waits, for the reason given; it starts once that reason is gone.
    case updateDeferred(UpdateInfo, reason: UpdateDeferral)
    /// The app declined the automatic update to this version (`AutoUpdateDecision.decline`), for the reason
    /// given; the store does not update to it by itself. Sent once per version.
    case updateDeclined(UpdateInfo, reason: String)
    /// An automatic check failed (the catalog could not be fetched or was refused); the schedule goes on.
    case updateCheckFailed(MapStoreError)
    /// An update's progress (all regions together).
    case updateProgress(UpdateProgress)
    /// A download task installed these regions.
    case downloadFinished([RegionID])
    /// A download task failed (fetched bytes are kept: the regions are paused).
    case downloadFailed([RegionID], MapStoreError)
    /// An update installed this map version.
    case updateFinished(MapVersion)
    /// An update emptied the map cache (cache seed included) before its switch: the cache holds one map
    /// version's data. Sent, when there were entries, before `updateFinished`, with what was removed.
    case mapCacheReset(CacheReset)
    /// An update failed; the installed version stays.
    case updateFailed(MapStoreError)
    /// The catalog regions on offer changed (a catalog of the installed version was kept).
    case availableRegionsChanged
    /// `moveData(to:)` copied this fraction (0…1) of the storage.
    case moveProgress(Double)
    /// `moveData(to:)` committed: the storage is now this folder.
    case storageMoved(URL)
    /// An update was paused (`UpdateTask.pause()`); its fetched bytes are kept.
    case updatePaused
    /// `repair()` finished, with what it did (region states it changed were sent before).
    case repaired(RepairReport)
    /// `switchStorage(to:)` made this folder the store's storage; its status as found there.
    case storageSwitched(URL, StoreStatus)
    /// The app reported a network change (`networkChanged(metered:)`), with the downloads and the update
    /// the network policy paused or resumed because of it.
    case networkChanged(NetworkChange)
}
