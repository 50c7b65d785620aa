import Foundation
import MapFormat
import MapIO
import Synchronization

/// What region listings read besides the snapshot, without the store's lock (so a list screen never
/// waits for an update, a move or a repair): the kept catalog, parsed once per file and reused while
/// the file is the same, and for a store whose state does not record them (installed by an older
/// library), the kept manifest's block size and catalog name, read once per image.
final class ListingCache: Sendable {
    private let catalog = Mutex<(identity: String, tree: RegionTree)?>(nil)
    private let facts = Mutex<(imageID: String, blockSize: Int64, catalog: String)?>(nil)

    /// The kept catalog when it is of the snapshot's map version; nil when none is kept. A write
    /// replaces the file by a rename, so a read sees one whole file; one that changed while it was
    /// read is used but not remembered.
    func keptCatalog(_ snapshot: StoreSnapshot) -> RegionTree? {
        guard let version = snapshot.mapVersion else { return nil }
        let path = snapshot.root + "/" + StoreLayout.catalogFileName
        guard let before = (try? FileSystem.status(path)) ?? nil, before.isRegular else { return nil }
        let tree: RegionTree
        if let cached = catalog.withLock({ $0 }), cached.identity == before.identity {
            tree = cached.tree
        } else {
            guard let parsed = Self.readCatalog(path) else { return nil }
            if let after = (try? FileSystem.status(path)) ?? nil, after.identity == before.identity {
                catalog.withLock { $0 = (before.identity, parsed) }
            }
            tree = parsed
        }
        return tree.catalog.mapVersion == version ? tree : nil
    }

    /// The catalog file at `path`, read and parsed; nil when it is missing or unreadable.
    static func readCatalog(_ path: String) -> RegionTree? {
        guard let bytes = try? ReadableFile.contents(of: path, limit: CatalogLoader.maxBytes) else { return nil }
        return try? CatalogLoader.tree(bytes, url: URL(fileURLWithPath: path))
    }

    /// The installed manifest's block size and catalog name.
    func manifestFacts(_ snapshot: StoreSnapshot) throws -> (blockSize: Int64, catalog: String) {
        if let blockSize = snapshot.blockSize, let name = snapshot.catalogName { return (blockSize, name) }
        guard let imageID = snapshot.imageID else { throw MapStoreError.notInstalled }
        if let cached = facts.withLock({ $0 }), cached.imageID == imageID { return (cached.blockSize, cached.catalog) }
        let manifest = try StoreLayout(root: snapshot.root).keptManifest()
        facts.withLock { $0 = (manifest.imageID, manifest.blockSize, manifest.catalog) }
        return (manifest.blockSize, manifest.catalog)
    }
}
