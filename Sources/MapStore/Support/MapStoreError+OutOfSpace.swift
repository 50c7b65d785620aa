import Foundation
import MapIO

/// A full disk is one typed failure wherever the store writes: install, update, download.
extension MapStoreError {
    /// `error` as `outOfSpace` in the storage folder `storage` when it is a write that found the
    /// filesystem full (ENOSPC, EDQUOT, SQLITE_FULL), however the layer below carried it; else nil.
    static func outOfSpace(_ error: any Error, storage: String) -> MapStoreError? {
        var file = error as? FileError
        if case ArchiveError.io(let inner)? = error as? ArchiveError { file = inner }
        if case MapStoreError.local(let path, let code?, _, _, _)? = error as? MapStoreError { file = FileError(.write, path, code: code) }
        // SQLITE_FULL: the state database could not grow.
        if let database = error as? SQLiteError, database.code == 13 { file = FileError(.write, database.path, code: ENOSPC) }
        guard let file, file.code == ENOSPC || file.code == EDQUOT else { return nil }
        return .outOfSpace(storage: storage, path: file.path, errno: file.code)
    }
}
