import Foundation
import MapFetch
import MapFormat
import MapIO
import Synchronization

/// Why a source folder could not be published.
public enum PublishError: Error, Sendable, CustomStringConvertible {
    case notASource(path: String, reason: String)
    /// `source.json` breaks `mappack-source/1`: the file, the field (`regions[3].bbox`) and what is wrong.
    case invalidSource(file: String, field: String, problem: String)
    case pathInTwoBundles(path: String, first: String, second: String)
    case badBundleFolder(bundle: String, reason: String)
    case invalidCatalog(CatalogError)
    case io(String)
    /// The signing key cannot sign (not a mappack private key).
    case badSigningKey(path: String, reason: String)
    /// `--catalog-version` is not above the version already signed in the output folder (or equal to it with other bytes).
    case catalogVersionNotNewer(given: Int64, previous: Int64, path: String)
    /// `--catalog-version` jumps further than `CatalogSigning.maxStep` beyond the clock and the previous version.
    case catalogVersionTooFar(given: Int64, limit: Int64)
    /// The previous `catalog.json.sig` in the output folder cannot be read, so the rollback guard has nothing to go by.
    case previousSignatureDamaged(path: String, reason: String)
    /// The previous version is the largest there is; only a reset of the counter can follow it.
    case catalogVersionExhausted(previous: Int64, path: String)
    /// `--previous` names nothing.
    case previousMissing(path: String)
    /// `--previous` is not a published folder or `catalog.json`.
    case previousNotACatalog(path: String, reason: String)
    /// `--previous` is a catalog of another id: its bundles are no earlier version of these.
    case previousOtherLineage(path: String, previous: String, current: String)
    /// The previous publish's `publish-record.json` cannot be read, or belongs to another catalog.
    case previousRecordDamaged(path: String, reason: String)

    public var description: String {
        switch self {
        case .notASource(let path, let reason): "\(path): not a region source folder: \(reason)"
        case .invalidSource(let file, let field, let problem): "\(file): \(field): \(problem) (docs/source-format.md)"
        case .pathInTwoBundles(let path, let first, let second):
            "file '\(path)' is in both bundle '\(first)' and bundle '\(second)'; a store path must belong to one bundle"
        case .badBundleFolder(let bundle, let reason): "bundle '\(bundle)': \(reason)"
        case .invalidCatalog(let error): "the source describes an invalid catalog: \(error)"
        case .io(let message): message
        case .badSigningKey(let path, let reason): "\(path): cannot sign the catalog: \(reason)"
        case .catalogVersionNotNewer(let given, let previous, let path):
            "--catalog-version \(given) is not above version \(previous) signed in \(path); devices that saw \(previous) would refuse it as a rollback (or mix-and-match): give a larger --catalog-version or leave it out"
        case .catalogVersionTooFar(let given, let limit):
            "--catalog-version \(given) is more than ten years of seconds beyond the clock and the previous version (limit \(limit)); devices that saw it would refuse every later catalog as a rollback; give a smaller one, or --force if you mean it"
        case .previousSignatureDamaged(let path, let reason):
            "\(path): the previous signature cannot be read (\(reason)), so the version it guards against rolling back is unknown; restore it from your release records, or pass --force to sign anyway (devices still refuse a version below the one they saw)"
        case .catalogVersionExhausted(let previous, let path):
            "version \(previous) signed in \(path) is the largest devices accept, so no later version exists; reset the lineage's counter with a new key: mappack publish … --sign OLD.key --reset-lineage NEW.key (docs/security.md, Recovering a frozen counter)"
        case .previousMissing(let path): "--previous \(path): no such file or folder; name the folder of the previous publish (or its catalog.json)"
        case .previousNotACatalog(let path, let reason):
            "--previous \(path): not a published catalog (\(reason)); name the folder of the previous publish (or its catalog.json)"
        case .previousOtherLineage(let path, let previous, let current):
            "--previous \(path): catalog '\(previous)', not '\(current)' as this source: name a previous version of '\(current)'"
        case .previousRecordDamaged(let path, let reason):
            "--previous: \(path): \(reason); restore it, or publish without --previous (into a new folder) to pack every bundle"
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
    /// `--previous`: a published folder (or its `catalog.json`) of an earlier version; bundles whose
    /// source is unchanged since are copied from it (checked against its SHA-256), not packed.
    public var previous: String?
    /// Whether `previous` was not asked for but found (the output folder's catalog, which this
    /// publish replaces): then one that is not a previous version is passed over, not refused.
    public var previousIsImplicit = false
    /// Told what the people running the publish should know (a previous bundle that was damaged).
    public var notice: (@Sendable (String) -> Void)?
    /// Told what the publish is doing: `(.pack, bundles packed, bundles)` at the start and after
    /// each bundle, then `(.catalog, regions, bundles)`.
    public var progress: (@Sendable (_ phase: BuildPhase, _ done: Int, _ total: Int) -> Void)?

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
        /// Bundles copied from `--previous` rather than packed.
        public var reused = 0
        /// The signature's version, when the catalog was signed.
        public var signedVersion: Int64?
    }

    struct PackedBundle: Sendable {
        let name: String
        let digest: BundleDigest
        let info: BundleInfo
        let paths: [String]
        /// `BundleSource.digest` of what it was packed from.
        let sourceDigest: SHA256Digest
        let temporary: String
        /// The `.zck` waiting beside it, with `--chunked`.
        let chunkedTemporary: String?
        /// Copied from the previous publish rather than packed.
        var wasReused = true
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
        try world.validate(file: sourceFile, folder: source)
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
            let notice = self.notice
            let packer = BundleSource.packer(chunked: chunked)
            let previous = try openPrevious(catalogID: world.catalog, packer: packer)
            let packedCount = Mutex(0)
            progress?(.pack, 0, names.count)
            let packed = try await BlockingWork.map(names, width: jobs) { name in
                let source = try BundleSource.read(name: name, folder: sourceRoot + "/bundles/" + name)
                let kind = world.bundles[name]?.kind
                let temporary = staging + "/bundles/\(name).tmp.tar.zst"
                var reused: PackedBundle?
                switch try previous?.reuse(source, kind: kind, temporary: temporary, chunked: chunked) {
                case .reused(let bundle): reused = bundle
                case .damaged(let path, let reason):
                    notice?("bundle '\(name)': \(path) from --previous is damaged (\(reason)): packed afresh from the source")
                case .notRecorded, nil: break
                }
                let bundle = try reused ?? Publisher.pack(source, kind: kind, temporary: temporary, mtime: mtime, chunked: chunked)
                if let progress {
                    progress(
                        .pack,
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
            progress?(.catalog, regions.count, infos.count)
            var catalog = Catalog(catalog: world.catalog, mapVersion: world.mapVersion, released: world.released, regions: regions, bundles: infos)
            catalog.supportedUntil = world.supportedUntil
            do { _ = try RegionTree(catalog) } catch { throw PublishError.invalidCatalog(error) }
            let catalogBytes = try CanonicalJSON.encode(catalog)
            try FileSystem.writeAtomically(catalogBytes, to: staging + "/catalog.json")
            let record = PublishRecord(
                catalog: catalog.catalog, catalogSHA256: SHA256.digest(catalogBytes), packer: packer,
                sources: Dictionary(packed.map { ($0.sourceDigest.hex, $0.digest.description) }, uniquingKeysWith: { first, _ in first }))
            try FileSystem.writeAtomically(try CanonicalJSON.encode(record), to: staging + "/" + PublishRecord.fileName)
            // Devices fetch the catalog compressed (issue 33); hashes and signatures stay over the plain bytes.
            let compressed = Zstd.compress(catalogBytes, level: Self.catalogCompressionLevel)
            try FileSystem.writeAtomically(compressed, to: staging + "/" + Self.compressedCatalogName)
            var signedVersion: Int64?
            if let signing {
                let (signature, version, epoch) = try Self.sign(
                    catalogBytes, catalog: catalog.catalog, with: signing,
                    previousAt: absoluteOutput + "/" + CatalogSignature.fileName)
                try FileSystem.writeAtomically(signature, to: staging + "/" + CatalogSignature.fileName)
                let timestamp = try Self.signTimestamp(
                    catalogBytes, compressed: compressed, catalog: catalog.catalog, version: version, epoch: epoch, with: signing,
                    previousAt: absoluteOutput + "/" + CatalogTimestamp.fileName)
                try FileSystem.writeAtomically(timestamp, to: staging + "/" + CatalogTimestamp.fileName)
                signedVersion = version
            }
            try FileSystem.syncDirectory(staging)
            // Swap in: the old output (if any) is moved aside, then removed.
            try area.commit(as: outputName)
            var result = Result(
                catalogPath: absoluteOutput + "/catalog.json", regions: regions.count, bundles: infos.count,
                bytes: infos.values.reduce(0) { $0 + $1.size }, signedVersion: signedVersion)
            result.reused = Set(packed.lazy.filter(\.wasReused).map(\.digest)).count
            return result
        } catch {
            area.discard()
            throw error
        }
    }

    /// The previous publish to reuse bundles from: `--previous`, refused when it is no earlier
    /// version of `catalogID`; or the output folder's catalog, passed over when it is not.
    private func openPrevious(catalogID: String, packer: String) throws -> PreviousPublish? {
        guard let previous else { return nil }
        let notice = self.notice
        do {
            return try PreviousPublish.open(previous, catalogID: catalogID, packer: packer) { notice?($0) }
        } catch let error as PublishError {
            guard previousIsImplicit else { throw error }
            switch error {
            case .previousMissing, .previousNotACatalog, .previousOtherLineage: break
            default: notice?("\(error); packing every bundle")
            }
            return nil
        }
    }

    /// The compressed catalog's name beside `catalog.json`.
    public static let compressedCatalogName = "catalog.json.zst"
    /// `zstd -19`: a catalog is written once and fetched by every device.
    static let catalogCompressionLevel: Int32 = 19

    /// The `catalog.json.timestamp` bytes for the catalog just signed. Its own counter is the build
    /// clock in seconds, and at least one more than the previous timestamp's at `previousAt` (a damaged
    /// previous timestamp is ignored: it guards nothing a device checks, the signature does that).
    private static func signTimestamp(
        _ catalogBytes: Data, compressed: Data, catalog: String, version: Int64, epoch: Int64?, with signing: CatalogSigning,
        previousAt path: String
    ) throws -> Data {
        let previous = try? CatalogTimestamp.parse(try ReadableFile.contents(of: path, limit: CatalogTimestamp.maxBytes), source: path)
        let seconds = signing.clock.timeIntervalSince1970.rounded(.down)
        let clock = seconds < 0 ? 0 : Int64(min(seconds, Double(CatalogSignature.maxVersion)))
        let timestampVersion = min(max(clock, (previous?.timestampVersion ?? -1) + 1), CatalogSignature.maxVersion)
        do {
            return try CatalogTrust.signTimestamp(
                catalogBytes: catalogBytes, compressed: compressed, catalog: catalog, version: version, epoch: epoch,
                timestampVersion: timestampVersion, expires: signing.clock.addingTimeInterval(min(signing.timestampValidFor, signing.validFor)),
                privateKey: signing.privateKey, path: signing.keyPath)
        } catch {
            throw PublishError.badSigningKey(path: signing.keyPath, reason: error.description)
        }
    }

    /// The signature file for `catalogBytes`, its version and epoch. The version never goes below the one
    /// signed at `previousAt` (the output folder's signature, when there is one).
    private static func sign(
        _ catalogBytes: Data, catalog: String, with signing: CatalogSigning, previousAt path: String
    ) throws -> (Data, Int64, Int64?) {
        var previous: CatalogSignature?
        if FileSystem.exists(path) {
            do {
                previous = try CatalogSignature.parse(try ReadableFile.contents(of: path, limit: CatalogSignature.maxBytes), source: path)
            } catch {
                if !signing.force { throw PublishError.previousSignatureDamaged(path: path, reason: "\(error)") }
            }
        }
        // A reset starts a new epoch whose versions are not compared with the old ones.
        let epoch = signing.reset != nil ? (previous?.lineageEpoch ?? 0) + 1 : previous?.epoch
        let guarded = signing.reset == nil ? previous : nil
        let seconds = signing.clock.timeIntervalSince1970.rounded(.down)
        let clockVersion = seconds < 0 ? 0 : Int64(min(seconds, Double(CatalogSignature.maxVersion)))
        let afterPrevious = (guarded?.version ?? -1) + 1
        if let guarded, afterPrevious > CatalogSignature.maxVersion {
            throw PublishError.catalogVersionExhausted(previous: guarded.version, path: path)
        }
        let version = signing.version ?? max(clockVersion, afterPrevious)
        let limit = max(clockVersion, afterPrevious) + CatalogSigning.maxStep
        if version > limit, !signing.force { throw PublishError.catalogVersionTooFar(given: version, limit: limit) }
        if let guarded, version < guarded.version || (version == guarded.version && SHA256.digest(catalogBytes) != guarded.sha256) {
            throw PublishError.catalogVersionNotNewer(given: version, previous: guarded.version, path: path)
        }
        do {
            let bytes = try CatalogTrust.sign(
                catalogBytes: catalogBytes, catalog: catalog, version: version, epoch: epoch,
                expires: signing.clock.addingTimeInterval(signing.validFor), nextKey: signing.nextKey,
                privateKey: signing.privateKey, path: signing.keyPath, reset: signing.reset)
            return (bytes, version, epoch)
        } catch {
            throw PublishError.badSigningKey(path: signing.keyPath, reason: error.description)
        }
    }

    /// Packs one bundle folder deterministically and measures it.
    private static func pack(_ source: BundleSource, kind: String?, temporary: String, mtime: Int, chunked: Bool) throws -> PackedBundle {
        let folder = source.folder
        var zck: (path: String, written: Zchunk.Written, headerSHA256: String, parameters: Zchunk.Parameters)?
        let sha256: SHA256Digest
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
            (sha256, size) = try copyRange(of: zckPath, from: written.headerSize, count: written.size - written.headerSize, to: temporary)
            zck = (zckPath, written, header.digest.hex, parameters)
        } else {
            let writer = try ArchiveWriter(path: temporary, mtime: mtime, level: 6)
            try writer.addTree(folder)
            try writer.finish()
            (sha256, size) = try SHA256.digestOfFile(temporary)
        }
        let digest = BundleDigest(sha256: sha256)
        let hex = sha256.hex
        var info = BundleInfo(
            url: "bundles/\(hex.prefix(2))/\(hex).tar.zst", size: size, unpackedSize: source.unpackedSize, files: source.paths.count,
            kind: kind, sizeOnDisk: source.sizeOnDisk)
        if let zck {
            info.chunked = zck.parameters.recorded(
                in: ChunkedBundle(
                    url: "bundles/\(hex.prefix(2))/\(hex).zck", size: zck.written.size, headerSize: zck.written.headerSize,
                    headerSHA256: zck.headerSHA256))
        }
        return PackedBundle(
            name: source.name, digest: digest, info: info, paths: source.paths, sourceDigest: source.digest, temporary: temporary,
            chunkedTemporary: zck?.path, wasReused: false)
    }

    /// Hashes `count` bytes of `path` from `offset`, copying them to a new file `target` when given;
    /// the SHA-256 and the bytes copied. Fewer bytes than `count` is an error.
    private static func copyRange(of path: String, from offset: Int64, count: Int64, to target: String?) throws -> (digest: SHA256Digest, size: Int64)
    {
        let copied = try SHA256.copyRange(of: path, from: offset, count: count, to: target)
        guard copied.size == count else { throw PublishError.io("\(path): ends before byte \(offset + count)") }
        return copied
    }
}
