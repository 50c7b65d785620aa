import Foundation
import MapIO

/// A full disk is one typed failure wherever the store writes: install, update, download.
extension MapStoreError {
    /// `error` as `outOfSpace` in the storage folder `storage` when it is a write that found the
    /// filesystem full (ENOSPC, EDQUOT, SQLITE_FULL), however the layer below carried it; else nil.
    static func outOfSpace(_ error: any Error, storage: String) -> MapStoreError? {
        var inner = error
        if case MapStoreError.local(let path, let code?, _, _, _)? = error as? MapStoreError { inner = FileError(.write, path, code: code) }
        // The state database's SQLITE_FULL among them.
        guard let file = FileError.outOfSpace(in: inner) else { return nil }
        return .outOfSpace(storage: storage, path: file.path, errno: file.code)
    }
}
