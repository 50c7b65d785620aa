import Foundation
import MapFormat
import MapIO
import Synchronization

/// One bundle's files as unpacked into staging: a summary for the manifest and sizes, and the
/// file list itself, either in memory or spilled to a `FileRecordSpill` so a build's memory does
/// not grow with the number of files.
struct UnpackedBundle: Sendable {
    let digest: BundleDigest
    let fileCount: Int
    let unpackedSize: Int64
    /// Bytes on disk of its files at the recipe's block size.
    let allocatedSize: Int64
    /// The first and last path in bytewise order (nil without files).
    let firstPath: String?
    let lastPath: String?
    /// True when some path needs escaping in JSON (the manifest then takes the slow, in-memory route).
    let needsEscaping: Bool
    private let storage: Storage

    private enum Storage: Sendable {
        case memory([ExtractedFile])
        case spilled(FileRecordSpill, FileRecordSpill.Records)
    }

    /// Summarises `files` (any order) and keeps them in `spill` when given, else in memory. With a
    /// spill, the bundle's entries of the manifest's file list are encoded here too (on the
    /// unpacking thread, while other bundles still download) and kept beside the records.
    init(digest: BundleDigest, files: [ExtractedFile], blockSize: Int64, spill: FileRecordSpill?) throws(FileError) {
        var sorted = files
        if !sorted.isSorted(by: { $0.path.string.utf8.lexicographicallyPrecedes($1.path.string.utf8) }) {
            sorted.sort { $0.path.string.utf8.lexicographicallyPrecedes($1.path.string.utf8) }
        }
        self.digest = digest
        fileCount = sorted.count
        unpackedSize = sorted.reduce(0) { $0 + $1.size }
        allocatedSize = blockSize > 0 ? sorted.reduce(0) { $0 + SizeOnDisk.allocated(size: $1.size, blockSize: blockSize) } : 0
        firstPath = sorted.first?.path.string
        lastPath = sorted.last?.path.string
        needsEscaping = sorted.contains { ImageManifest.pathNeedsEscaping($0.path.string) }
        guard let spill else {
            storage = .memory(sorted)
            return
        }
        var entries: [UInt8] = []
        if !needsEscaping {
            let bundleText = digest.description
            entries.reserveCapacity(sorted.reduce(0) { $0 + $1.path.string.utf8.count + 180 })
            for (index, file) in sorted.enumerated() {
                ImageManifest.appendFileEntry(
                    path: file.path.string, size: file.size, sha256: file.sha256, bundleText: bundleText,
                    first: index == 0, to: &entries)
            }
        }
        storage = .spilled(spill, try spill.append(sorted, manifestEntries: needsEscaping ? nil : entries))
    }

    /// The files, sorted by path (bytewise).
    func files() throws(FileError) -> [ExtractedFile] {
        switch storage {
        case .memory(let files): files
        case .spilled(let spill, let records): try spill.read(records)
        }
    }

    /// This bundle's entries of the manifest's file list, comma-separated, as encoded when it was
    /// spilled (see `ImageManifest.appendFileEntry`); nil when they were not (kept in memory, or a
    /// path needs escaping).
    func manifestEntries() throws(FileError) -> [UInt8]? {
        guard case .spilled(let spill, let records) = storage, records.entriesLength != nil else { return nil }
        return try spill.readEntries(records)
    }
}

extension Array {
    fileprivate func isSorted(by precedes: (Element, Element) -> Bool) -> Bool {
        zip(self, dropFirst()).allSatisfy { precedes($0, $1) }
    }
}

/// An append-only scratch file of file records (path, size, digest) in the staging folder,
/// written by the unpacking threads and read back bundle by bundle when the manifest is written.
final class FileRecordSpill: Sendable {
    /// Where one bundle's records lie.
    struct Records: Sendable {
        let offset: Int64
        let length: Int
        let count: Int
        /// Bytes of encoded manifest entries right after the records, if any were given.
        let entriesLength: Int?
    }

    let path: String
    private let descriptor: FileDescriptor
    private let end = Mutex<Int64>(0)

    /// Creates (or truncates) the spill file at `path`.
    init(path: String) throws(FileError) {
        self.path = path
        do { descriptor = try unsafe FileDescriptor.open(path, .readWrite, options: [.create, .truncate], permissions: 0o600) } catch {
            throw FileError(.open, path, code: error.code)
        }
    }

    deinit { try? descriptor.close() }

    /// Appends `files`' records, followed by `manifestEntries` when given; safe from several threads at once.
    func append(_ files: [ExtractedFile], manifestEntries: [UInt8]? = nil) throws(FileError) -> Records {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(files.reduce(0) { $0 + $1.path.string.utf8.count + 76 } + (manifestEntries?.count ?? 0))
        for file in files {
            let count = UInt32(file.path.string.utf8.count)
            appendLittleEndian(count, to: &bytes)
            bytes.append(contentsOf: file.path.string.utf8)
            appendLittleEndian(file.size, to: &bytes)
            file.sha256.appendHex(to: &bytes)
        }
        let recordsLength = bytes.count
        if let manifestEntries { bytes.append(contentsOf: manifestEntries) }
        let offset = end.withLock { end in
            let start = end
            end += Int64(bytes.count)
            return start
        }
        do { try unsafe descriptor.writeAll(toAbsoluteOffset: offset, bytes.span.bytes) } catch { throw FileError(.write, path, code: error.code) }
        return Records(offset: offset, length: recordsLength, count: files.count, entriesLength: manifestEntries?.count)
    }

    /// The manifest entries stored with `records` (empty when none were).
    func readEntries(_ records: Records) throws(FileError) -> [UInt8] {
        try bytes(at: records.offset + Int64(records.length), count: records.entriesLength ?? 0)
    }

    private func bytes(at offset: Int64, count: Int) throws(FileError) -> [UInt8] {
        do { return try descriptor.readAll(fromAbsoluteOffset: offset, count: count) } catch { throw FileError(.read, path, code: error.code) }
    }

    /// Appends `value`'s bytes, least significant first.
    private func appendLittleEndian<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: T.bitWidth, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }

    /// The files of one `append`, in the order given.
    func read(_ records: Records) throws(FileError) -> [ExtractedFile] {
        let bytes = try bytes(at: records.offset, count: records.length)
        var files: [ExtractedFile] = []
        files.reserveCapacity(records.count)
        var at = 0
        func integer<T: FixedWidthInteger>(_: T.Type) -> T {
            var value: T = 0
            for (index, byte) in bytes[at..<at + MemoryLayout<T>.size].enumerated() { value |= T(truncatingIfNeeded: byte) << (index * 8) }
            at += MemoryLayout<T>.size
            return value
        }
        for _ in 0..<records.count {
            let pathLength = Int(integer(UInt32.self))
            let path = String(decoding: bytes[at..<at + pathLength], as: UTF8.self)
            at += pathLength
            let size = integer(Int64.self)
            // Written by `append` from a digest: always 64 lower-case hex digits.
            let digest = unsafe SHA256Digest(hex: bytes.span.bytes.extracting(at..<at + 64))!
            at += 64
            // Written by `append` from a checked path.
            files.append(ExtractedFile(path: StorePath(alreadyChecked: path), size: size, sha256: digest))
        }
        return files
    }
}

/// A build's unpacked bundles by digest: the bundles in one array and an index of their
/// positions. A dictionary holding the bundles themselves was 2.9 MiB of a cold build's peak at
/// 6 796 bundles (its buckets sized for growth); this is 1.4 MiB.
struct UnpackedBundles: Sendable {
    private var positions: [BundleDigest: Int] = [:]
    private var bundles: [UnpackedBundle] = []

    /// None yet, with room for `capacity`.
    init(capacity: Int = 0) {
        positions.reserveCapacity(capacity)
        bundles.reserveCapacity(capacity)
    }

    var isEmpty: Bool { bundles.isEmpty }
    var count: Int { bundles.count }

    /// The bundle unpacked as `digest`, if any.
    subscript(digest: BundleDigest) -> UnpackedBundle? {
        positions[digest].map { bundles[$0] }
    }

    /// Adds `bundle` unless one with its digest is there already (the first stays).
    mutating func insert(_ bundle: UnpackedBundle) {
        guard positions[bundle.digest] == nil else { return }
        positions[bundle.digest] = bundles.count
        bundles.append(bundle)
    }
}
