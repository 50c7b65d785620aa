import Foundation
import MapIO
import Synchronization

/// Where the store keeps its data, and switching to another storage folder.
extension MapStore {
    /// Switches this store to the storage folder `folder` (a file URL): adopts the store there when
    /// there is one (returning its status, which may ask for `repair()`), or starts an empty storage.
    /// Nothing is copied or removed; to carry the data along use `moveData(to:)`. The cache stays where it is.
    ///
    /// Refused with `MapStoreError.busy` while a download task (running or paused) or an update
    /// (running or paused) is live: it works on this storage's files and records. Runs on a thread of
    /// its own (it creates the folder durably, removes a killed process's staging leftovers there and
    /// checks the store it finds). A cancellation of the calling task that arrives before the switch
    /// starts throws `MapStoreError.cancelled` and changes nothing. Consumers of `events()` hear
    /// `.storageSwitched` with the folder and its status.
    @discardableResult
    public func switchStorage(to folder: URL) async throws(MapStoreError) -> StoreStatus {
        let status = try await MapStoreError.boundary("switchStorage", path: folder.storeFolderPath) {
            try await cancellableWrite { [self] core throws -> StoreStatus in
                try core.checkCancelled()
                if let busy = runtime.withLock({ $0.liveWork }) {
                    throw MapStoreError.busy(
                        operation: "switchStorage",
                        reason: "\(busy) works on the current storage folder; let it finish or cancel it (cancel()), then switch")
                }
                // The folder first: when it cannot be made, the store stays where it was.
                let layout = StoreLayout(root: folder.storeFolderPath)
                try FileSystem.makeDirectoriesDurably(layout.root)
                core.layout = layout
                core.state = nil
                return core.diagnose()
            }
        }
        broadcaster.send(.storageSwitched(storage, status))
        return status
    }
}
