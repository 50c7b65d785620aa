import Foundation
import MapIO
import Synchronization

/// Where the store keeps its data, and switching to another storage folder.
extension MapStore {
    /// The storage folder's path (use `storage`, a file URL).
    @available(*, deprecated, message: "use storage (a file URL); its .path is this")
    public var storagePath: String { storageFolder }

    /// Switches this store to the storage folder `folder` (a file URL): adopts the store there when
    /// there is one (returning its status, which may ask for `repair()`), or starts an empty storage.
    /// Nothing is copied or removed; to carry the data along use `moveData(to:)`. The cache stays where it is.
    @discardableResult
    public func switchStorage(to folder: URL) throws(MapStoreError) -> StoreStatus {
        try MapStoreError.boundary("switchStorage", path: folder.storeFolderPath) {
            try write { core throws -> StoreStatus in
                // The folder first: when it cannot be made, the store stays where it was.
                let layout = StoreLayout(root: folder.storeFolderPath)
                try FileSystem.makeDirectoriesDurably(layout.root)
                core.layout = layout
                core.state = nil
                return core.diagnose()
            }
        }
    }

    /// Switches this store to the storage folder at `path` (see `switchStorage(to:)`).
    @available(*, deprecated, renamed: "switchStorage(to:)", message: "pass a file URL")
    @discardableResult
    public func setStoragePath(_ path: String) throws(MapStoreError) -> StoreStatus {
        try switchStorage(to: URL(fileURLWithPath: path, isDirectory: true))
    }
}
