import Foundation
import MapFormat
import MapIO

/// A folder image's `manifest.json` read once, front to back, for `verifyFolderStreaming`: file
/// entries come out one at a time, checked as `ImageVerifier.readManifest` checks them, and what
/// the end needs is gathered on the way (the id's digest, each bundle's allocated bytes), so
/// nothing grows with the file count. Pages already read are handed back. The bundle list is
/// checked but not kept (nothing in a verification needs it).
///
/// Anything unusual stops the stream, and `explain` then reads the bytes the ordinary way, so a
/// broken manifest gets exactly the error it always got.
struct StreamedManifest {
    /// Why the stream stopped.
    enum Stop: Error {
        case json(JSONFileError)
        /// An entry that `readManifest` refuses: negative size, a path leaving the store.
        case refusedEntry
        /// The same path twice in a row.
        case duplicate
        /// `files[index]` sorts before the entry above it.
        case unsorted(index: Int, path: String, previous: String)
    }

    private let mapping: MappedFile
    private let file: String
    private var stream: ManifestStream
    private var idDigest = ManifestIDDigest()
    /// False when another thread computes the id (`ManifestIDDigest.concurrent`), handed to `finish`.
    private let hashesID: Bool
    private var order: EntryOrder
    /// Entries read so far: the id's digest and the pages handed back advance every `catchUp` entries,
    /// as the stream's position is asked for once per so many (each ask copies the stream).
    private var entries = 0
    private static let catchUp = 256
    /// `blockSize` once the stream has read it (it does not change while files are read).
    private var blockSize: Int64?
    /// Each bundle's files' allocated bytes, at the manifest's block size.
    private var allocated: [BundleDigest: Int64] = [:]
    /// The bundle of the last entries, and their allocated bytes not yet in `allocated`.
    private var running: (bundle: BundleDigest, bytes: Int64)?
    /// `blockSize` came after the files, so sizes were not summed on the way.
    private var sizesUnknown = false

    /// Starts reading the manifest mapped in `mapping`; `file` names it in errors. Without
    /// `hashingID` the id's digest comes from elsewhere (`finish(concurrentID:)`); without
    /// `checkingPaths` the entries' paths are not checked, their sizes are.
    init(_ mapping: MappedFile, file: String, hashingID: Bool = true, checkingPaths: Bool = true) throws(Stop) {
        self.mapping = mapping
        self.file = file
        hashesID = hashingID
        order = EntryOrder(checkingPaths: checkingPaths)
        do { stream = try unsafe ManifestStream(mapping.bytes, file: file) } catch { throw .json(error) }
    }

    /// Hands the next file entry to `body`; false after the last.
    mutating func next(_ body: (ManifestStream.FileEntry) -> Void) throws(Stop) -> Bool {
        // The rules are moved out while the stream runs `body`, which may not reach into `self`.
        var order = EntryOrder()
        swap(&order, &self.order)
        var stop: Stop?
        var sized: (size: Int64, bundle: BundleDigest)?
        let more: Bool
        do {
            more = try stream.nextFile { entry in
                stop = order.admit(entry)
                guard stop == nil else { return }
                sized = (entry.size, entry.bundle)
                body(entry)
            }
        } catch {
            swap(&order, &self.order)
            throw .json(error)
        }
        swap(&order, &self.order)
        entries += 1
        if !more || entries % StreamedManifest.catchUp == 0 {
            let offset = stream.offset
            if hashesID {
                let imageID = stream.imageID
                mapping.withBytes { idDigest.advance($0, to: offset, imageID: imageID) }
            }
            mapping.release(below: offset)
        }
        if let stop { throw stop }
        if let sized {
            if blockSize == nil { blockSize = stream.blockSize }
            if let blockSize, blockSize > 0 {
                add(SizeOnDisk.allocated(size: sized.size, blockSize: blockSize), to: sized.bundle)
            } else {
                sizesUnknown = true
            }
        }
        return more
    }

    /// Counts `bytes` for `bundle`: in a running sum while neighbouring entries share the bundle,
    /// as they mostly do, and in `allocated` when it changes.
    private mutating func add(_ bytes: Int64, to bundle: BundleDigest) {
        if let (current, sum) = running {
            if current == bundle {
                running = (current, sum + bytes)
                return
            }
            allocated[current, default: 0] += sum
        }
        running = (bundle, bytes)
    }

    /// The rules `readManifest` applies to each entry, and the order the stream adds. Without
    /// `checksPaths` only the size is checked: not the path as a store path, nor order or duplicates
    /// (`ImageVerifier.readManifestStreaming(at:checkingPaths:)`).
    private struct EntryOrder {
        var checksPaths = true
        private var previous: [UInt8] = []
        private var index = 0

        init(checkingPaths: Bool = true) { checksPaths = checkingPaths }

        /// Why `entry` stops the stream, if it does.
        mutating func admit(_ entry: ManifestStream.FileEntry) -> Stop? {
            if entry.size < 0 { return .refusedEntry }
            guard checksPaths else { return nil }
            if unsafe StorePath.problem(in: entry.path.assumingMemoryBound(to: UInt8.self).span) != nil { return .refusedEntry }
            let order = unsafe index == 0 ? -1 : StoreTreeCheck.compare(previous.span.bytes, entry.path.bytes)
            if order == 0 { return .duplicate }
            if order > 0 {
                return unsafe .unsorted(
                    index: index, path: String(decoding: entry.path, as: UTF8.self), previous: String(decoding: previous, as: UTF8.self))
            }
            previous.removeAll(keepingCapacity: true)
            unsafe previous.append(contentsOf: entry.path)
            index += 1
            return nil
        }
    }

    /// The manifest's header, and its own problems (id, sizes on disk), after the last entry;
    /// throws what `readManifest` throws for a bad one. A stream made without `hashingID` takes
    /// the id from `concurrentID` when that read the manifest's id field, and otherwise (nil, or
    /// another field) hashes the bytes here.
    mutating func finish(concurrentID: ManifestIDDigest.Concurrent? = nil) throws(ImageOpenError) -> (ManifestHeader, [VerifyProblem]) {
        let manifest: ManifestHeader
        do { manifest = try stream.finish() } catch { throw StreamedManifest.explain(.json(error), mapping: mapping, file: file) }
        defer { mapping.releaseAll() }
        try ImageVerifier.checkHeader(manifest, file: file)
        if ImageVerifier.hasDuplicateRegions(manifest) { throw .manifest(path: file, reason: ImageVerifier.duplicateReason) }
        var hashedID: String?
        if !hashesID, let concurrentID, concurrentID.blanked == manifest.imageID {
            hashedID = concurrentID.id
        } else {
            // With `hashingID` the digest is behind the reader; without, it starts from the first byte.
            mapping.withBytes { idDigest.advance($0, to: $0.byteCount, imageID: manifest.imageID, final: true) }
            hashedID = idDigest.finish()
        }
        guard !sizesUnknown, let expectedID = hashedID else {
            // Not as mappack writes manifests: re-encoding the whole manifest is the only way to tell.
            let (full, problems) = try unsafe ImageVerifier.readManifest(Data(mapping.bytes), file: file)
            return (full.header, problems)
        }
        if let (bundle, bytes) = running {
            allocated[bundle, default: 0] += bytes
            running = nil
        }
        let derived = ImageManifest.sizesOnDisk(regions: manifest.regions, allocatedPerBundle: allocated)
        return (manifest, ImageVerifier.problems(of: manifest, expectedID: expectedID, derivedSizes: derived))
    }

    /// The error for a stream that stopped: what `readManifest` says of the bytes, or else the
    /// rule the stream adds (entries sorted by path).
    static func explain(_ stop: Stop, mapping: MappedFile, file: String) -> ImageOpenError {
        defer { mapping.releaseAll() }
        do { _ = try unsafe ImageVerifier.readManifest(Data(mapping.bytes), file: file) } catch { return error }
        switch stop {
        case .unsorted(let index, let path, let previous):
            return .manifest(
                path: file,
                reason: "files[\(index)] '\(path)' comes after '\(previous)': the file list must be sorted by path "
                    + "(bytewise), as mappack writes it; the manifest was edited or written by another tool")
        case .json(let error): return .manifest(path: file, reason: "not a valid manifest: \(error)")
        case .refusedEntry, .duplicate: return .manifest(path: file, reason: "not a valid manifest")
        }
    }
}

extension ImageVerifier {
    /// The manifest at `manifestPath` without its file list, for an in-place store's first start
    /// (no trusted keys, no `fullValidation`): its members before and after the list read and checked
    /// on this thread (format, block size, bundles, regions, duplicates), while another hashes every
    /// byte for the id, which `SkimmedManifest.idProblem()` waits for. The list itself (sizes, paths,
    /// order) is left to whatever reads it later: `verify`, an update, a delete, a repair read it whole
    /// and check every entry. Nil for a manifest not as mappack writes it, or with any error or
    /// problem here: the caller then reads it the one-thread way, for its result or its exact error.
    package static func readManifestSkippingFiles(at manifestPath: String) -> SkimmedManifest? {
        guard let mapping = MappedFile(path: manifestPath, limit: maxManifestBytes) else { return nil }
        defer { mapping.releaseAll() }
        let stop = StopFlag()
        let hashing = BlockingPool.start { ManifestIDDigest.concurrent(at: manifestPath, limit: maxManifestBytes, stop: stop.isRaised) }
        guard var stream = try? unsafe ManifestStream(mapping.bytes, file: manifestPath), (try? stream.openFileList()) == true,
            let end = stream.canonicalFileListEnd(from: stream.offset), (try? stream.skipFileList(endingAt: end)) != nil,
            let manifest = try? stream.finish(), (try? checkHeader(manifest, file: manifestPath)) != nil, !hasDuplicateRegions(manifest)
        else {
            stop.raise()
            return nil
        }
        return SkimmedManifest(manifest, file: manifestPath, hashing: hashing, stop: stop)
    }

    /// What `readManifestSkippingFiles` read, and the id's hash under way.
    package final class SkimmedManifest {
        /// The manifest's members but the file list (and the bundle list, checked, not kept).
        package let manifest: ManifestHeader
        private let file: String
        private let hashing: PendingResult<ManifestIDDigest.Concurrent?>
        private let stop: StopFlag

        fileprivate init(_ manifest: ManifestHeader, file: String, hashing: PendingResult<ManifestIDDigest.Concurrent?>, stop: StopFlag) {
            self.manifest = manifest
            self.file = file
            self.hashing = hashing
            self.stop = stop
        }

        /// The hash's result no longer wanted once this is gone.
        deinit { stop.raise() }

        /// Waits for the id's hash: nil when the manifest's id is its bytes' (with the id blanked), the
        /// mismatch otherwise. Throws the one-thread reading's error when the hash could not tell (the
        /// id field spelt another way): that reading then decides, and its result must be this one's.
        package func idProblem() throws(ImageOpenError) -> VerifyProblem? {
            if let hashed = (try? hashing.value()) ?? nil, hashed.blanked == manifest.imageID {
                return ImageVerifier.idProblem(of: manifest, expectedID: hashed.id)
            }
            let (read, problems) = try ImageVerifier.readManifestStreaming(at: file, checkingPaths: false)
            guard read == manifest else { throw .manifest(path: file, reason: "the manifest changed while it was read") }
            return problems.first { $0.kind == .imageIDMismatch }
        }
    }
}
