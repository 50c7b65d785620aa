import Foundation
import MapFormat
import MapIO

extension ImageVerifier {
    /// Verifies a packed image (`.tar.zst`) in one streaming pass, without unpacking to disk:
    /// the manifest must come first; every other entry is hashed as it streams by and compared
    /// with the manifest's entry for it (`PackedStoreCheck`). The manifest is kept in a temporary
    /// file, mapped, and read as a stream; the report keeps the whole manifest.
    package static func verifyPacked(_ path: String, trusted: [TrustedKey] = []) throws(ImageOpenError) -> VerifyReport<ImageManifest> {
        try verifyPacked(path, trusted: trusted, keepingFileList: true) { manifest, _ in manifest! }
    }

    /// `verifyPacked`, keeping only the manifest's header: memory does not grow with the file count.
    package static func verifyPackedStreaming(_ path: String, trusted: [TrustedKey] = []) throws(ImageOpenError) -> VerifyReport<ManifestHeader> {
        try verifyPacked(path, trusted: trusted, keepingFileList: false) { _, header in header }
    }

    /// The verification both share; `report` makes the report's manifest from the whole manifest
    /// (read only `keepingFileList`) and the header.
    private static func verifyPacked<Manifest: Sendable>(
        _ path: String, trusted: [TrustedKey], keepingFileList: Bool, report kept: (ImageManifest?, ManifestHeader) -> Manifest
    ) throws(ImageOpenError) -> VerifyReport<Manifest> {
        guard Zstd.startsWithMagic(path) else { throw .notAnImage(path: path) }
        let reader: ArchiveReader
        do { reader = try ArchiveReader(path: path) } catch { throw .archive(path: path, error) }
        let hasher = SHA256()
        var manifest: (full: ImageManifest?, header: ManifestHeader, files: Int, mapping: MappedFile)?
        var store: PackedStoreCheck?
        var problems: [VerifyProblem] = []
        var seedDigest: (digest: SHA256Digest, size: Int64)?
        var bytes: Int64 = 0
        var signature: Data?
        // A manifest found but refused: said as it is, not as "no manifest.json" (issue 41).
        var manifestRefusal: ImageOpenError?
        do throws(ArchiveError) {
            var rule = PackedImageEntry.Rule()
            while let entry = try reader.next() {
                let name = try SafeExtractor.cleanPath(entry).string
                switch entry.kind {
                case .directory, .regular: break
                default: throw ArchiveError.forbiddenType(entry: name, type: "\(entry.kind)")
                }
                let role = rule.admit(name, isDirectory: entry.kind == .directory)
                switch role {
                case .failure(.manifestNotFirst): throw ImageOpenError.notAnImage(path: path).asArchive
                case .failure(let refusal):
                    problems.append(VerifyProblem(kind: .extra, path: name, regions: [], detail: refusal.description))
                    if entry.kind == .directory { continue }
                case .success(.storeFolder), .success(.minisignSignature): continue
                case .success(.manifest):
                    guard entry.size <= maxManifestBytes else { throw ArchiveError.tooLarge(entry: name, limit: Int64(maxManifestBytes)) }
                    let file = path + ":" + name
                    guard let mapping = try unsafe MappedFile.copying({ (chunk) throws(ArchiveError) in try unsafe reader.readData(into: chunk) })
                    else {
                        // Unreadable before a manifest was had: not an image.
                        throw ImageOpenError.notAnImage(path: path).asArchive
                    }
                    let full: ImageManifest?
                    let header: ManifestHeader
                    let found: [VerifyProblem]
                    let count: Int
                    do {
                        (full, header, found, count) = try readPackedManifest(mapping, file: file, keepingFileList: keepingFileList)
                        store = try PackedStoreCheck(mapping, file: file)
                    } catch {
                        manifestRefusal = error as? ImageOpenError ?? .manifest(path: file, reason: "not a valid manifest: \(error)")
                        throw ImageOpenError.notAnImage(path: path).asArchive
                    }
                    manifest = (full, header, count, mapping)
                    problems += found
                    continue
                case .success(.signature):
                    guard let data = try reader.readRest(limit: 4096) else { throw ArchiveError.tooLarge(entry: name, limit: 4096) }
                    signature = data
                    continue
                case .success(.cacheSeed), .success(.store): break
                }
                hasher.reset()
                let size = try reader.hashRest(with: hasher)
                bytes += size
                let digest = hasher.finalize()
                switch role {
                case .success(.cacheSeed): seedDigest = (digest, size)
                case .success(.store(let storePath)): store?.found(storePath, size: size, digest: digest)
                default: break
                }
            }
        } catch {
            if let manifestRefusal { throw manifestRefusal }
            if case .malformed(let message) = error, message == notAnImageMarker { throw .notAnImage(path: path) }
            // Unreadable before a manifest was found: this is not an image at all.
            if manifest == nil { throw .notAnImage(path: path) }
            throw .archive(path: path, error)
        }
        guard let manifest, var store else { throw .notAnImage(path: path) }
        if !trusted.isEmpty {
            defer { manifest.mapping.releaseAll() }
            if let problem = try checkSignature(manifestBytes: manifest.mapping.readOnlyData, signature: signature, trusted: trusted) {
                problems.append(problem)
            }
        }
        let owners = owners(of: manifest.header.regions)
        problems += store.finish().map { finding in
            VerifyProblem(kind: finding.kind, path: finding.path, regions: finding.bundle.flatMap { owners[$0] } ?? [], detail: finding.detail)
        }
        if let seed = manifest.header.cacheSeed, seedDigest?.digest != seed.sha256 || seedDigest?.size != seed.size {
            problems.append(
                VerifyProblem(
                    kind: .cacheSeedMismatch, path: ImageManifest.cacheSeedFileName, regions: seed.regions,
                    detail: seedDigest == nil ? "cache seed is missing" : "cache seed differs from the manifest"))
        }
        problems.sort { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
        var report = VerifyReport(
            manifest: kept(manifest.full, manifest.header), problems: problems, filesChecked: manifest.files, bytesHashed: bytes)
        report.signed = signature != nil
        return report
    }

    /// A packed image's manifest checked as a whole: the whole manifest (only with
    /// `keepingFileList`), its header, its own problems and the number of files; refused, saying why
    /// (damaged, a repeated entry, …), when it is not a valid manifest. The order of the file list
    /// does not matter here: an unsorted one is read the ordinary way.
    private static func readPackedManifest(
        _ mapping: MappedFile, file: String, keepingFileList: Bool
    ) throws(ImageOpenError) -> (ImageManifest?, ManifestHeader, [VerifyProblem], Int) {
        if !keepingFileList, var reading = try? StreamedManifest(mapping, file: file) {
            var count = 0
            do {
                while try reading.next({ _ in count += 1 }) {}
                let (header, problems) = try reading.finish()
                return (nil, header, problems, count)
            } catch {
                // Unsorted, or not valid: the whole reader below says which.
            }
        }
        defer { mapping.releaseAll() }
        let (manifest, problems) = try unsafe readManifest(Data(mapping.bytes), file: file)
        return (keepingFileList ? manifest : nil, manifest.header, problems, manifest.files.count)
    }

    fileprivate static let notAnImageMarker = "first entry is not manifest.json"
}

extension ImageOpenError {
    /// Carries "not an image" through the archive loop's typed error.
    fileprivate var asArchive: ArchiveError { .malformed(ImageVerifier.notAnImageMarker) }
}
