import Foundation
import MapIO

/// The public API throws only `MapStoreError`: what the layers below throw (file-system and database
/// failures, archive refusals) is wrapped here, keeping its description.
extension MapStoreError {
    /// `error` as a `MapStoreError`: itself; a file-system or state-database failure as `.local` (with
    /// ENOSPC when the disk is full); anything else as `.io` naming `operation` and `path`.
    static func wrapping(_ error: any Error, operation: String, path: String) -> MapStoreError {
        switch error {
        case let error as MapStoreError: return error
        case let file as FileError:
            return .local(path: file.path, errno: file.code, regions: [], bundle: nil, reason: "\(operation): \(file.description)")
        case let database as SQLiteError:
            // SQLITE_FULL: the database (or its journal) could not grow.
            return .local(
                path: database.path, errno: database.isDiskFull ? ENOSPC : nil, regions: [], bundle: nil,
                reason: "\(operation): \(database.description)")
        case is CancellationError: return .cancelled
        default: return .io(operation: operation, path: path, reason: "\(error)")
        }
    }

    /// Runs `body`, throwing whatever it throws as a `MapStoreError` (see `wrapping`).
    static func boundary<T>(_ operation: String, path: @autoclosure () -> String, _ body: () throws -> T) throws(MapStoreError) -> T {
        do { return try body() } catch { throw wrapping(error, operation: operation, path: path()) }
    }

    /// `boundary` for async work.
    static func boundary<T>(_ operation: String, path: @autoclosure () -> String, _ body: () async throws -> T) async throws(MapStoreError) -> T {
        do { return try await body() } catch { throw wrapping(error, operation: operation, path: path()) }
    }
}
