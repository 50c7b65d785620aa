import MapIO
import Synchronization

/// Where the store keeps its data, and switching to another storage folder.
extension MapStore {
    /// The storage folder in use (same as `storage`).
    public var storagePath: String { storage }

    /// Switches this store to the storage folder `path`: adopts the store there when there is one
    /// (returning its status, which may ask for `repair()`), or starts an empty storage. Nothing is
    /// copied or removed; to carry the data along use `moveData(to:)`. The cache stays where it is.
    @discardableResult
    public func setStoragePath(_ path: String) throws(MapStoreError) -> StoreStatus {
        try MapStoreError.boundary("setStoragePath", path: path) {
            try write { core throws -> StoreStatus in
                // The folder first: when it cannot be made, the store stays where it was.
                let layout = StoreLayout(root: FileSystem.absolute(path))
                try FileSystem.makeDirectoriesDurably(layout.root)
                core.layout = layout
                core.state = nil
                return core.diagnose()
            }
        }
    }
}
