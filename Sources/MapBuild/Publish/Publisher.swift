import Foundation
import MapFetch
import MapFormat
import MapIO
import Synchronization

/// Why a source folder could not be published.
public enum PublishError: Error, Sendable, CustomStringConvertible {
    case notASource(path: String, reason: String)
    case unknownBundle(region: RegionID, bundle: String)
    case pathInTwoBundles(path: String, first: String, second: String)
    case badBundleFolder(bundle: String, reason: String)
    case invalidCatalog(CatalogError)
    case io(String)
    /// The signing key cannot sign (not a mappack private key).
    case badSigningKey(path: String, reason: String)
    /// `--catalog-version` is not above the version already signed in the output folder (or equal to it with other bytes).
    case catalogVersionNotNewer(given: Int64, previous: Int64, path: String)

    public var description: String {
        switch self {
        case .notASource(let path, let reason): "\(path): not a region source folder: \(reason)"
        case .unknownBundle(let region, let bundle): "region '\(region)' lists bundle '\(bundle)', which has no folder under bundles/"
        case .pathInTwoBundles(let path, let first, let second):
            "file '\(path)' is in both bundle '\(first)' and bundle '\(second)'; a store path must belong to one bundle"
        case .badBundleFolder(let bundle, let reason): "bundle '\(bundle)': \(reason)"
        case .invalidCatalog(let error): "the source describes an invalid catalog: \(error)"
        case .io(let message): message
        case .badSigningKey(let path, let reason): "\(path): cannot sign the catalog: \(reason)"
        case .catalogVersionNotNewer(let given, let previous, let path):
            "--catalog-version \(given) is not above version \(previous) signed in \(path); devices that saw \(previous) would refuse it as a rollback (or mix-and-match): give a larger --catalog-version or leave it out"
        }
    }
}

/// Turns a region source folder into `catalog.json` plus content-addressed `.tar.zst` bundles.
/// The same source always gives the same bytes.
public struct Publisher: Sendable {
    /// The source folder.
    public let source: String
    /// Where the catalog goes (replaced atomically).
    public let output: String
    /// Parallel bundle writers.
    public let jobs: Int
    /// When set, `catalog.json.sig` is written beside the catalog.
    public var signing: CatalogSigning?
    /// `--chunked`: every bundle is also written as a `.zck` (issue 21) and listed under its `chunked` field;
    /// the `.tar.zst` is then the `.zck`'s data section, a valid zstd stream of one frame per chunk.
    public var chunked = false
    /// Told what the publish is doing: `("pack", bundles packed, bundles)` at the start and after
    /// each bundle, then `("catalog", regions, bundles)`.
    public var progress: (@Sendable (_ phase: String, _ done: Int, _ total: Int) -> Void)?

    /// A publisher from `source` to `output`.
    public init(source: String, output: String, jobs: Int = ProcessInfo.processInfo.activeProcessorCount) {
        self.source = source
        self.output = output
        self.jobs = jobs
    }

    /// What a publish produced.
    public struct Result: Sendable {
        public let catalogPath: String
        public let regions: Int
        public let bundles: Int
        public let bytes: Int64
        /// The signature's version, when the catalog was signed.
        public var signedVersion: Int64?
    }

    private struct PackedBundle: Sendable {
        let name: String
        let digest: BundleDigest
        let info: BundleInfo
        let paths: [String]
        let temporary: String
        /// The `.zck` waiting beside it, with `--chunked`.
        let chunkedTemporary: String?
    }

    /// Publishes; on failure nothing is left at `output` that was not there before.
    public func run() async throws -> Result {
        let sourceFile = source + "/source.json"
        let data: Data
        do { data = try ReadableFile.contents(of: sourceFile, limit: 256 << 20) } catch {
            throw PublishError.notASource(path: source, reason: error.description)
        }
        let world = try CanonicalJSON.decode(SourceWorld.self, from: data, file: sourceFile)
        do { try FormatTagError.check(world.format, expected: SourceWorld.formatTag) } catch {
            throw PublishError.notASource(path: sourceFile, reason: error.description)
        }
        for region in world.regions {
            for bundle in region.bundles where world.bundles[bundle] == nil { throw PublishError.unknownBundle(region: region.id, bundle: bundle) }
        }
        let absoluteOutput = FileSystem.absolute(output)
        let parent = FileSystem.parent(absoluteOutput)
        try FileSystem.makeDirectories(parent)
        let outputName = FileSystem.lastComponent(absoluteOutput)
        try StagingArea.sweepStale(in: parent, for: outputName)
        let area = try StagingArea(for: outputName, kind: .publish, in: parent).makeFolder("bundles")
        let staging = area.path
        do {
            let names = world.bundles.keys.sorted()
            let sourceRoot = source
            let mtime = 0
            let progress = self.progress
            let chunked = self.chunked
            let packedCount = Mutex(0)
            progress?("pack", 0, names.count)
            let packed = try await BlockingWork.map(names, width: jobs) { name in
                let bundle = try Publisher.pack(
                    name: name, kind: world.bundles[name]?.kind, folder: sourceRoot + "/bundles/" + name,
                    temporary: staging + "/bundles/\(name).tmp.tar.zst", mtime: mtime, chunked: chunked)
                if let progress {
                    progress(
                        "pack",
                        packedCount.withLock {
                            $0 += 1
                            return $0
                        }, names.count)
                }
                return bundle
            }
            var owner: [String: String] = [:]
            for bundle in packed {
                for path in bundle.paths {
                    if let first = owner[path] { throw PublishError.pathInTwoBundles(path: path, first: first, second: bundle.name) }
                    owner[path] = bundle.name
                }
            }
            var digests: [String: BundleDigest] = [:]
            var infos: [BundleDigest: BundleInfo] = [:]
            for bundle in packed {
                digests[bundle.name] = bundle.digest
                let target = staging + "/" + bundle.info.url
                try FileSystem.makeDirectories(FileSystem.parent(target))
                if infos[bundle.digest] != nil {
                    try FileSystem.removeFile(bundle.temporary)
                    if let zck = bundle.chunkedTemporary { try FileSystem.removeFile(zck) }
                } else {
                    try FileSystem.rename(bundle.temporary, to: target)
                    if let zck = bundle.chunkedTemporary, let url = bundle.info.chunked?.url { try FileSystem.rename(zck, to: staging + "/" + url) }
                }
                infos[bundle.digest] = bundle.info
            }
            let regions = world.regions.map { region in
                CatalogRegion(
                    id: region.id, parent: region.parent, names: region.names, bundles: region.bundles.map { digests[$0]! },
                    center: region.center, bbox: region.bbox, cities: region.cities, released: region.released ?? world.released)
            }
            progress?("catalog", regions.count, infos.count)
            var catalog = Catalog(catalog: world.catalog, mapVersion: world.mapVersion, released: world.released, regions: regions, bundles: infos)
            catalog.supportedUntil = world.supportedUntil
            do { _ = try RegionTree(catalog) } catch { throw PublishError.invalidCatalog(error) }
            let catalogBytes = try CanonicalJSON.encode(catalog)
            try FileSystem.writeAtomically(catalogBytes, to: staging + "/catalog.json")
            var signedVersion: Int64?
            if let signing {
                let (signature, version) = try Self.sign(
                    catalogBytes, catalog: catalog.catalog, with: signing,
                    previousAt: absoluteOutput + "/" + CatalogSignature.fileName)
                try FileSystem.writeAtomically(signature, to: staging + "/" + CatalogSignature.fileName)
                signedVersion = version
            }
            try FileSystem.syncDirectory(staging)
            // Swap in: the old output (if any) is moved aside, then removed.
            try area.commit(as: outputName)
            return Result(
                catalogPath: absoluteOutput + "/catalog.json", regions: regions.count, bundles: infos.count,
                bytes: infos.values.reduce(0) { $0 + $1.size }, signedVersion: signedVersion)
        } catch {
            area.discard()
            throw error
        }
    }

    /// The signature file for `catalogBytes` and its version. The version never goes below the one
    /// signed at `previousAt` (the output folder's signature, when there is one).
    private static func sign(_ catalogBytes: Data, catalog: String, with signing: CatalogSigning, previousAt path: String) throws -> (Data, Int64) {
        var previous: CatalogSignature?
        if FileSystem.exists(path), let data = try? ReadableFile.contents(of: path, limit: CatalogSignature.maxBytes) {
            previous = try? CatalogSignature.parse(data, source: path)
        }
        let seconds = signing.clock.timeIntervalSince1970.rounded(.down)
        let clockVersion = seconds < 0 ? 0 : seconds < 9e18 ? Int64(seconds) : Int64.max
        let (afterPrevious, overflow) = (previous?.version ?? -1).addingReportingOverflow(1)
        if overflow, signing.version == nil, let previous {
            throw PublishError.catalogVersionNotNewer(given: previous.version, previous: previous.version, path: path)
        }
        let version = signing.version ?? max(clockVersion, afterPrevious)
        if let previous, version < previous.version || (version == previous.version && SHA256.hex(catalogBytes) != previous.sha256) {
            throw PublishError.catalogVersionNotNewer(given: version, previous: previous.version, path: path)
        }
        do {
            let bytes = try CatalogTrust.sign(
                catalogBytes: catalogBytes, catalog: catalog, version: version,
                expires: signing.clock.addingTimeInterval(signing.validFor), nextKey: signing.nextKey,
                privateKey: signing.privateKey, path: signing.keyPath)
            return (bytes, version)
        } catch {
            throw PublishError.badSigningKey(path: signing.keyPath, reason: error.description)
        }
    }

    /// Packs one bundle folder deterministically and measures it.
    private static func pack(name: String, kind: String?, folder: String, temporary: String, mtime: Int, chunked: Bool) throws -> PackedBundle {
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
            throw PublishError.badBundleFolder(bundle: name, reason: "invalid bundle name")
        }
        let entries: [DirectoryWalker.Entry]
        do { entries = try DirectoryWalker.walk(folder) } catch { throw PublishError.badBundleFolder(bundle: name, reason: error.description) }
        var paths: [String] = []
        var unpacked: Int64 = 0
        var onDisk = Dictionary(uniqueKeysWithValues: BundleInfo.publishedBlockSizes.map { ($0, Int64(0)) })
        for entry in entries {
            if entry.isDirectory { continue }
            guard entry.isRegular else {
                throw PublishError.badBundleFolder(bundle: name, reason: "'\(entry.relativePath)' is not a regular file or folder")
            }
            paths.append(entry.relativePath)
            unpacked += entry.size
            for block in BundleInfo.publishedBlockSizes { onDisk[block]! += SizeOnDisk.allocated(size: entry.size, blockSize: block) }
        }
        if paths.isEmpty { throw PublishError.badBundleFolder(bundle: name, reason: "holds no files") }
        var zck: (path: String, written: Zchunk.Written, headerSHA256: String, parameters: Zchunk.Parameters)?
        let hex: String
        let size: Int64
        if chunked {
            // The plain tar goes through zchunk; the bundle is the .zck without its header.
            let tar = temporary + ".tar"
            let zckPath = temporary + ".zck"
            let writer = try ArchiveWriter(path: tar, mtime: mtime, compressed: false)
            try writer.addTree(folder)
            try writer.finish()
            guard let tarSize = try FileSystem.status(tar)?.size else { throw PublishError.io("\(tar): vanished while publishing") }
            let parameters = Zchunk.Parameters.publisher(tarSize: tarSize)
            let written = try Zchunk.compress(tar, to: zckPath, parameters: parameters)
            try FileSystem.removeFile(tar)
            let header = try copyRange(of: zckPath, from: 0, count: written.headerSize, to: nil)
            (hex, size) = try copyRange(of: zckPath, from: written.headerSize, count: written.size - written.headerSize, to: temporary)
            zck = (zckPath, written, header.hex, parameters)
        } else {
            let writer = try ArchiveWriter(path: temporary, mtime: mtime, level: 6)
            try writer.addTree(folder)
            try writer.finish()
            (hex, size) = try SHA256.hexOfFile(temporary)
        }
        let digest = BundleDigest(hex: hex)
        var info = BundleInfo(
            url: "bundles/\(hex.prefix(2))/\(hex).tar.zst", size: size, unpackedSize: unpacked, files: paths.count,
            kind: kind, sizeOnDisk: Dictionary(uniqueKeysWithValues: onDisk.map { (String($0.key), $0.value) }))
        if let zck {
            info.chunked = zck.parameters.recorded(
                in: ChunkedBundle(
                    url: "bundles/\(hex.prefix(2))/\(hex).zck", size: zck.written.size, headerSize: zck.written.headerSize,
                    headerSHA256: zck.headerSHA256))
        }
        return PackedBundle(name: name, digest: digest, info: info, paths: paths, temporary: temporary, chunkedTemporary: zck?.path)
    }

    /// Hashes `count` bytes of `path` from `offset`, copying them to a new file `target` when given;
    /// the hex SHA-256 and the bytes copied. Fewer bytes than `count` is an error.
    private static func copyRange(of path: String, from offset: Int64, count: Int64, to target: String?) throws -> (hex: String, size: Int64) {
        let copied = try SHA256.copyRange(of: path, from: offset, count: count, to: target)
        guard copied.size == count else { throw PublishError.io("\(path): ends before byte \(offset + count)") }
        return copied
    }
}
