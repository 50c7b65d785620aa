import Foundation
import MapFormat
import MapIO

/// A publish the next one reuses bundles from (`publish --previous`, issue 33): its catalog, and
/// its `publish-record.json` saying which source content each bundle was packed from.
///
/// A bundle is reused only when its source digest is recorded there, the packer was the same, and
/// the previous bundle file (copied into the new publish, never linked, and hashed as it is copied) hashes
/// to the digest the catalog names; a file that does not (edited, truncated, missing) is packed
/// afresh from the source and the publish says so. So a publish with `--previous` writes the same
/// bytes as one without.
struct PreviousPublish: Sendable {
    /// The folder holding the previous `catalog.json` and its `bundles/`.
    let folder: String
    /// The previous catalog's bundles.
    let bundles: [BundleDigest: BundleInfo]
    /// Source digest → bundle, from the record; empty when nothing can be reused.
    let sources: [SHA256Digest: BundleDigest]

    /// What reusing one bundle came to.
    enum Reuse {
        case reused(Publisher.PackedBundle)
        /// The previous publish packed no bundle from this source.
        case notRecorded
        /// The previous publish packed this source, but its file is not the bytes it recorded.
        case damaged(path: String, reason: String)
    }

    /// Opens `path`, a published folder or its `catalog.json`, as the previous version of catalog
    /// `catalogID`. A path that is no published catalog of that id is refused; a catalog published
    /// without a record, or with another packer, reuses nothing, and `notice` says why.
    static func open(_ path: String, catalogID: String, packer: String, notice: (String) -> Void) throws -> PreviousPublish {
        guard let status = try? FileSystem.status(path) else { throw PublishError.previousMissing(path: path) }
        let isFolder = status.isDirectory || (status.isSymlink && (try? FileSystem.status(path + "/."))??.isDirectory == true)
        let catalogPath = isFolder ? path + "/catalog.json" : path
        let folder = isFolder ? path : FileSystem.parent(FileSystem.absolute(path))
        let catalog: Catalog
        let catalogBytes: Data
        do {
            catalogBytes = try ReadableFile.contents(of: catalogPath, limit: CatalogSource.maxBytes)
            catalog = try CatalogReader.read(catalogBytes, file: catalogPath)
        } catch {
            throw PublishError.previousNotACatalog(path: path, reason: "\(error)")
        }
        guard catalog.catalog == catalogID else {
            throw PublishError.previousOtherLineage(path: path, previous: catalog.catalog, current: catalogID)
        }
        let recordPath = folder + "/" + PublishRecord.fileName
        guard FileSystem.exists(recordPath) else {
            notice("\(path): no \(PublishRecord.fileName) (published before mappack recorded its sources): packing every bundle")
            return PreviousPublish(folder: folder, bundles: catalog.bundles, sources: [:])
        }
        let record: PublishRecord
        do {
            record = try CanonicalJSON.decode(
                PublishRecord.self, from: try ReadableFile.contents(of: recordPath, limit: PublishRecord.maxBytes), file: recordPath)
            try FormatTagError.check(record.format, expected: PublishRecord.formatTag)
        } catch {
            throw PublishError.previousRecordDamaged(path: recordPath, reason: "\(error)")
        }
        guard record.catalogSHA256 == SHA256.digest(catalogBytes), record.catalog == catalog.catalog else {
            throw PublishError.previousRecordDamaged(
                path: recordPath, reason: "it was written with another catalog than \(catalogPath) (its catalogSHA256 differs)")
        }
        guard record.packer == packer else {
            notice("\(path): its bundles were packed by '\(record.packer)', not '\(packer)': packing every bundle")
            return PreviousPublish(folder: folder, bundles: catalog.bundles, sources: [:])
        }
        var sources: [SHA256Digest: BundleDigest] = [:]
        for (source, bundle) in record.sources {
            guard let digest = BundleDigest(bundle), catalog.bundles[digest] != nil else {
                throw PublishError.previousRecordDamaged(path: recordPath, reason: "'\(bundle)' is not a bundle of \(catalogPath)")
            }
            // A key that is no digest matches no source: nothing to reuse for it.
            if let source = SHA256Digest(hex: source) { sources[source] = digest }
        }
        return PreviousPublish(folder: folder, bundles: catalog.bundles, sources: sources)
    }

    /// Places the bundle the previous publish packed from `source` at `temporary` (its `.zck` beside
    /// it, with `chunked`) and checks every byte against the digests the previous catalog names.
    func reuse(_ source: BundleSource, kind: String?, temporary: String, chunked: Bool) throws -> Reuse {
        guard let digest = sources[source.digest], let previous = bundles[digest], chunked == (previous.chunked != nil) else { return .notRecorded }
        // The files are found by digest, never by the URLs the previous catalog names.
        let hex = digest.hex
        let bundlePath = folder + "/bundles/\(hex.prefix(2))/\(hex).tar.zst"
        var info = BundleInfo(
            url: "bundles/\(hex.prefix(2))/\(hex).tar.zst", size: previous.size, unpackedSize: source.unpackedSize, files: source.paths.count,
            kind: kind, sizeOnDisk: source.sizeOnDisk)
        do {
            let placed = try Self.copy(bundlePath, to: temporary, size: previous.size)
            guard placed.digest == digest.sha256, placed.size == previous.size else {
                return try discard(temporary, nil, .damaged(path: bundlePath, reason: "its bytes are not the SHA-256 the catalog names"))
            }
            // Proven, not asserted: what the copy holds is this source's files (the record's mapping
            // could have been edited to name another genuine bundle).
            guard try BundleSource.digest(ofPackedBundle: temporary) == source.digest else {
                return try discard(
                    temporary, nil,
                    .damaged(
                        path: bundlePath,
                        reason: "it does not hold the files of source bundle '\(source.name)' (publish-record.json maps that source to it)"))
            }
        } catch {
            return try discard(temporary, nil, .damaged(path: bundlePath, reason: "\(error)"))
        }
        var chunkedTemporary: String?
        if let recorded = previous.chunked {
            let zckPath = folder + "/bundles/\(hex.prefix(2))/\(hex).zck"
            let zckTemporary = temporary + ".zck"
            chunkedTemporary = zckTemporary
            guard recorded.headerSize > 0, recorded.headerSize < recorded.size else {
                return try discard(temporary, zckTemporary, .damaged(path: zckPath, reason: "the catalog's headerSize is out of range"))
            }
            do {
                _ = try Self.copy(zckPath, to: zckTemporary, size: recorded.size)
                let header = try SHA256.copyRange(of: zckTemporary, from: 0, count: recorded.headerSize, to: nil)
                let data = try SHA256.copyRange(of: zckTemporary, from: recorded.headerSize, count: recorded.size - recorded.headerSize, to: nil)
                let size = try FileSystem.status(zckTemporary)?.size
                guard header.digest.hex == recorded.headerSHA256, data.digest == digest.sha256, size == recorded.size else {
                    return try discard(temporary, zckTemporary, .damaged(path: zckPath, reason: "its bytes are not the SHA-256s the catalog names"))
                }
            } catch {
                return try discard(temporary, zckTemporary, .damaged(path: zckPath, reason: "\(error)"))
            }
            info.chunked = recorded
            info.chunked?.url = "bundles/\(hex.prefix(2))/\(hex).zck"
        }
        return .reused(
            Publisher.PackedBundle(
                name: source.name, digest: digest, info: info, paths: source.paths, sourceDigest: source.digest, temporary: temporary,
                chunkedTemporary: chunkedTemporary))
    }

    /// Copies the previous file at `path` to `target` (its first `size` bytes, fsynced), hashing as it
    /// copies. A copy, never a hard link: with a link, an in-place edit of one publish's bundle
    /// (`dd conv=notrunc`) changed the other publish too (issue 41); the copy is checked against the
    /// digest the previous catalog names, so the new publish holds exactly those bytes.
    private static func copy(_ path: String, to target: String, size: Int64) throws(FileError) -> (digest: SHA256Digest, size: Int64) {
        try SHA256.copyRange(of: path, from: 0, count: size, to: target)
    }

    /// Removes what a failed reuse copied, and says why it failed.
    private func discard(_ temporary: String, _ zck: String?, _ outcome: Reuse) throws -> Reuse {
        if FileSystem.exists(temporary) { try FileSystem.removeFile(temporary) }
        if let zck, FileSystem.exists(zck) { try FileSystem.removeFile(zck) }
        return outcome
    }
}
