import Foundation
import MapBuild
import MapFormat
import MapIO
import MapStore
import MapVerify

/// What `mappack serve` shows: an image folder, a packed image (extracted into a folder under the
/// system's temporary folder, removed by `close()`) or an installed store, with its tile databases
/// found once (`TileDatabases`: the regions' own, then the cache seed's overview).
struct ServedImage: Sendable {
    enum Kind: String, Sendable { case folder, packed, store }

    let path: String
    let kind: Kind
    let manifest: ImageManifest
    let tiles: TileDatabases
    /// Each tile database's MBTiles `format`, by its path.
    let formats: [String: String]
    let zooms: ClosedRange<Int>?
    /// A folder under the system's temporary folder: the extracted image, the seed's tile databases.
    let scratch: String

    /// Opens `path`; `cache` is an installed store's map cache folder, whose `cache.sqlite` holds the
    /// imported cache seed (an image carries its own `cache-seed.sqlite`).
    static func open(_ path: String, cache: String?) throws -> ServedImage {
        guard FileSystem.exists(path) else { throw ImageOpenError.notAnImage(path: path) }
        let scratch = FileManager.default.temporaryDirectory.path + "/mappack-serve-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileSystem.makeDirectories(scratch)
        do {
            let kind: Kind
            var folder = path
            var seed: String?
            if MapStore.isStorage(URL(fileURLWithPath: path, isDirectory: true)) {
                kind = .store
                if let cache {
                    seed = cache + "/cache.sqlite"
                    guard FileSystem.exists(seed!) else {
                        throw UsageError(
                            message: "--cache \(cache): no cache.sqlite there; give the device's map cache folder (store install --cache)")
                    }
                }
            } else if FileSystem.isDirectory(path) {
                kind = .folder
            } else {
                kind = .packed
                folder = scratch + "/image"
                try extract(path, into: folder)
            }
            let manifestPath = folder + "/" + ImageManifest.fileName
            guard FileSystem.exists(manifestPath) else { throw ImageOpenError.notAnImage(path: path) }
            let manifest: ImageManifest
            // Not through a link: a manifest planted outside would name another image's files.
            do {
                let bytes = try ReadableFile.contents(of: manifestPath, limit: ImageVerifier.maxManifestBytes, followLinks: false)
                manifest = try ManifestReader.read(bytes, file: manifestPath)
            } catch {
                throw ImageOpenError.manifest(path: manifestPath, reason: "\(error)")
            }
            if kind != .store, manifest.cacheSeed != nil { seed = folder + "/" + ImageManifest.cacheSeedFileName }
            let tiles = try TileDatabases(
                regions: regions(of: manifest), store: folder + "/" + ImageManifest.storeFolder,
                seed: seed.map { TileDatabases.Seed(file: $0, scratch: scratch + "/seed", regions: seedRegions(of: manifest)) },
                confinedTo: folder)
            var formats: [String: String] = [:]
            for source in tiles.sources { formats[source.path] = try TileDatabases.format(of: source) }
            return ServedImage(
                path: path, kind: kind, manifest: manifest, tiles: tiles, formats: formats, zooms: try tiles.zoomRange(), scratch: scratch)
        } catch {
            try? FileSystem.removeTree(scratch)
            throw error
        }
    }

    /// Removes the scratch folder.
    func close() { try? FileSystem.removeTree(scratch) }

    /// The image's regions with the store files of their own bundles.
    static func regions(of manifest: ImageManifest) -> [OutputRegion] {
        var files: [BundleDigest: [OutputFile]] = [:]
        for file in manifest.files { files[file.bundle, default: []].append(OutputFile(path: file.path.string, bundle: file.bundle)) }
        return manifest.regions.map { region in
            OutputRegion(
                id: region.id, broughtBy: region.id, name: region.name, bbox: region.bbox,
                files: region.bundles.flatMap { files[$0] ?? [] }.sorted { $0.path < $1.path })
        }
    }

    /// The cache seed's regions (named from the manifest when it lists them too).
    static func seedRegions(of manifest: ImageManifest) -> [OutputRegion] {
        (manifest.cacheSeed?.regions ?? []).map { id in
            let known = manifest.region(id)
            return OutputRegion(id: id, broughtBy: id, name: known?.name ?? id.rawValue, bbox: known?.bbox, files: [])
        }
    }

    /// Extracts a packed image by the rule every installed reader applies (`PackedImageEntry`).
    private static func extract(_ archive: String, into folder: String) throws {
        try FileSystem.makeDirectories(folder)
        let free = (try? FileSystem.freeBytes(at: folder)) ?? Int64.max
        let extractor = SafeExtractor(limits: ExtractionLimits(maxBytes: free, maxEntries: 4_000_000))
        var filesBefore = 0
        do {
            _ = try extractor.extract(archive: archive, into: folder) { (entry, path) throws(ArchiveError) in
                let isDirectory = entry.kind == .directory
                if case .failure(let refused) = PackedImageEntry.classify(path, isDirectory: isDirectory, filesBefore: filesBefore) {
                    throw ArchiveError.unsafePath(entry: path, reason: refused.description)
                }
                if !isDirectory { filesBefore += 1 }
            }
        } catch {
            throw ImageOpenError.archive(path: archive, error)
        }
    }
}
