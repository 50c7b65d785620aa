import Foundation
import MapFormat
import MapIO
import MapVerify

/// Where things live inside a persistent storage folder.
struct StoreLayout: Sendable {
    /// The storage folder.
    let root: String
    /// The storage folder as a file URL, as the public API hands it out.
    var rootURL: URL { URL(fileURLWithPath: root, isDirectory: true) }

    /// The installed store tree (what readers open).
    var store: String { root + "/" + ImageManifest.storeFolder }
    /// The installed image's manifest, kept for verify and repair.
    var manifest: String { root + "/" + ImageManifest.fileName }
    /// The installed image's `manifest.sig`, kept beside its manifest so the signature can be checked again.
    var signature: String { root + "/" + ImageManifest.signatureFileName }
    /// The state database.
    var state: String { root + "/" + StoreLayout.stateFileName }
    /// The state database's file name.
    static let stateFileName = "state.sqlite"
    /// The download cache's folder name (fetched and partial bundles).
    static let downloadsFolderName = "downloads"
    /// The last catalog fetched from the catalog URL, with its signature, timestamp and HTTP validators
    /// (`CatalogFetcher`), so a check with nothing new costs a `304`. Outside `downloads/`, which holds bundles only.
    static let catalogFetchFolderName = "catalog-fetch"
    /// The lock file writers take turns on (`StorageLock`); empty, never removed while the storage is used.
    static let lockFileName = ".lock"
    /// The kept catalog's file name (the installed map version's catalog).
    static let catalogFileName = "catalog.json"
    /// This process's staging folder for installs, moves and repairs.
    var stagingArea: StagingArea { StagingArea(for: "", kind: .staging, in: root) }
    /// `stagingArea`'s path.
    var staging: String { stagingArea.path }
    /// This process's folder for the bundles a repair fetches.
    var repairBundles: String { StagingArea(for: "bundles", kind: .staging, in: root).path }

    /// Names starting with this are staging leftovers, removed at open.
    static let stagingPrefix = "." + StagingArea.Kind.staging.label + "-"

    /// The kept manifest, read and decoded (tens of MB for a continent: not for every open or listing).
    func keptManifest() throws -> ImageManifest {
        let data = try ReadableFile.contents(of: manifest, limit: ImageVerifier.maxManifestBytes)
        return try ImageVerifier.readManifest(data, file: manifest).0
    }

    /// `path` under `store`: checked when it became a `StorePath`, so it names a file inside the store.
    func storePath(_ path: StorePath) -> String { store + "/" + path.string }

    /// Store-relative `relative` under `store`, for a path as text (a verification's finding, a walk's
    /// entry; a manifest's paths are `StorePath`s): one that is not a `StorePath` throws, naming it,
    /// instead of a file being skipped.
    func storePath(_ relative: String) throws(MapStoreError) -> String {
        do { return storePath(try StorePath(validating: relative)) } catch {
            throw MapStoreError.io(operation: "join to \(store)", path: relative, reason: "not a path inside the store: \(error)")
        }
    }
}

extension URL {
    /// The absolute path of a file URL the app passed in, with `.` and `..` components and a trailing
    /// slash removed (symbolic links are left alone), as the store's folders are named internally.
    var storeFolderPath: String {
        let path = standardizedFileURL.path
        return FileSystem.absolute(path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path)
    }
}
