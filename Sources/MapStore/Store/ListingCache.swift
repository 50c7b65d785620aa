import Foundation
import MapFormat
import MapIO
import MapVerify
import Synchronization

/// What region listings read besides the snapshot, without the store's lock (so a list screen never
/// waits for an update, a move or a repair): the kept catalog, parsed once per file and reused while
/// the file is the same, and for a store whose state does not record them (installed by an older
/// library), the kept manifest's block size and catalog name, read once per image.
final class ListingCache: Sendable {
    private let catalog = Mutex<(identity: String, tree: RegionTree)?>(nil)
    private let facts = Mutex<(imageID: String, blockSize: Int64, catalog: String)?>(nil)
    private let files = Mutex<(imageID: String, files: RegionFiles)?>(nil)

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
        return try? CatalogLoader.tree(bytes, source: path)
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

    /// The kept manifest's files by region, read once per image: what `holdings` needs of it.
    struct RegionFiles: Sendable {
        var bundles: [RegionID: [BundleDigest]]
        var files: [BundleDigest: [(path: String, allocated: Int64)]]
    }

    /// Where each installed region's bytes are and what deleting it frees in the storage folder (see
    /// `InstalledRegion.bytesLocation`, `.freedByDeletingInBytes`): the kept manifest's files of the
    /// region and its installed descendants, each in the storage's tree (a regular file there, or every
    /// file in a store that copied its image) or read from the base.
    func holdings(_ snapshot: StoreSnapshot) throws -> [RegionID: (location: RegionBytesLocation, freed: Int64)] {
        guard let imageID = snapshot.imageID, !snapshot.regions.isEmpty else { return [:] }
        let known: RegionFiles
        if let cached = files.withLock({ $0 }), cached.imageID == imageID {
            known = cached.files
        } else {
            let layout = StoreLayout(root: snapshot.root)
            // In place at the base, the kept manifest is the base's.
            var path = layout.manifest
            if let base = snapshot.baseStoreFolder, !FileSystem.exists(path) {
                path = String(base.dropLast(ImageManifest.storeFolder.count)) + ImageManifest.fileName
            }
            let manifest = try ImageVerifier.readManifest(try ReadableFile.contents(of: path, limit: ImageVerifier.maxManifestBytes), file: path).0
            var byBundle: [BundleDigest: [(path: String, allocated: Int64)]] = [:]
            for file in manifest.files where manifest.blockSize > 0 {
                byBundle[file.bundle, default: []].append((file.path, SizeOnDisk.allocated(size: file.size, blockSize: manifest.blockSize)))
            }
            known = RegionFiles(
                bundles: Dictionary(manifest.regions.map { ($0.id, $0.bundles) }, uniquingKeysWith: { first, _ in first }), files: byBundle)
            if manifest.imageID == imageID { files.withLock { $0 = (imageID, known) } }
        }
        // The storage's own files: in place, the regular files of its tree (small: what the device wrote).
        let own: Set<String>? =
            snapshot.baseStoreFolder == nil
            ? nil : Set(((try? DirectoryWalker.walk(snapshot.storeFolder)) ?? []).filter(\.isRegular).map(\.relativePath))
        var children: [RegionID: [RegionID]] = [:]
        for row in snapshot.regions { if let parent = row.parent { children[parent, default: []].append(row.id) } }
        func subtree(_ id: RegionID) -> [RegionID] {
            var out = [id]
            var index = 0
            while index < out.count {
                out += children[out[index]] ?? []
                index += 1
            }
            return out
        }
        var useCount: [BundleDigest: Int] = [:]
        for row in snapshot.regions { for bundle in Set(known.bundles[row.id] ?? []) { useCount[bundle, default: 0] += 1 } }
        var out: [RegionID: (location: RegionBytesLocation, freed: Int64)] = [:]
        for row in snapshot.regions {
            let members = subtree(row.id)
            var uses: [BundleDigest: Int] = [:]
            for member in members { for bundle in Set(known.bundles[member] ?? []) { uses[bundle, default: 0] += 1 } }
            var inStorage = 0
            var inBase = 0
            var freed: Int64 = 0
            for (bundle, count) in uses {
                let alone = useCount[bundle] == count
                for file in known.files[bundle] ?? [] {
                    if own?.contains(file.path) ?? true {
                        inStorage += 1
                        if alone { freed += file.allocated }
                    } else {
                        inBase += 1
                    }
                }
            }
            let location: RegionBytesLocation =
                inBase == 0 ? (own == nil || inStorage > 0 ? .storage : .base) : inStorage == 0 ? .base : .baseAndStorage
            out[row.id] = (location, freed)
        }
        return out
    }
}
