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

    /// Summarises `files` (any order) and keeps them in `spill` when given, else in memory.
    init(digest: BundleDigest, files: [ExtractedFile], blockSize: Int64, spill: FileRecordSpill?) throws(FileError) {
        var sorted = files
        if !sorted.isSorted(by: { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }) {
            sorted.sort { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
        }
        self.digest = digest
        fileCount = sorted.count
        unpackedSize = sorted.reduce(0) { $0 + $1.size }
        allocatedSize = blockSize > 0 ? sorted.reduce(0) { $0 + SizeOnDisk.allocated(size: $1.size, blockSize: blockSize) } : 0
        firstPath = sorted.first?.path
        lastPath = sorted.last?.path
        needsEscaping = sorted.contains { ImageManifest.pathNeedsEscaping($0.path) }
        if let spill { storage = .spilled(spill, try spill.append(sorted)) } else { storage = .memory(sorted) }
    }

    /// The files, sorted by path (bytewise).
    func files() throws(FileError) -> [ExtractedFile] {
        switch storage {
        case .memory(let files): files
        case .spilled(let spill, let records): try spill.read(records)
        }
    }
}

private extension Array {
    func isSorted(by precedes: (Element, Element) -> Bool) -> Bool {
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
    }

    let path: String
    private let descriptor: Int32
    private let end = Mutex<Int64>(0)

    /// Creates (or truncates) the spill file at `path`.
    init(path: String) throws(FileError) {
        self.path = path
        descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        if descriptor < 0 { throw FileError("open", path) }
    }

    deinit { close(descriptor) }

    /// Appends `files`' records; safe from several threads at once.
    func append(_ files: [ExtractedFile]) throws(FileError) -> Records {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(files.reduce(0) { $0 + $1.path.utf8.count + 76 })
        for file in files {
            let count = UInt32(file.path.utf8.count)
            withUnsafeBytes(of: count.littleEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: file.path.utf8)
            withUnsafeBytes(of: file.size.littleEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: file.sha256.utf8)
        }
        let offset = end.withLock { end in
            let start = end
            end += Int64(bytes.count)
            return start
        }
        let failure = bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> FileError? in
            do throws(FileError) { try FileSystem.writeAll(raw, to: descriptor, at: offset, path: path); return nil } catch { return error }
        }
        if let failure { throw failure }
        return Records(offset: offset, length: bytes.count, count: files.count)
    }

    /// The files of one `append`, in the order given.
    func read(_ records: Records) throws(FileError) -> [ExtractedFile] {
        var bytes = [UInt8](repeating: 0, count: records.length)
        let failure = bytes.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) -> FileError? in
            var done = 0
            while done < raw.count {
                let n = pread(descriptor, raw.baseAddress! + done, raw.count - done, off_t(records.offset) + off_t(done))
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return FileError("read", path, code: n == 0 ? EIO : errno) }
                done += n
            }
            return nil
        }
        if let failure { throw failure }
        var files: [ExtractedFile] = []
        files.reserveCapacity(records.count)
        var at = 0
        func integer<T: FixedWidthInteger>(_: T.Type) -> T {
            var value: T = 0
            withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: bytes[at..<at + MemoryLayout<T>.size]) }
            at += MemoryLayout<T>.size
            return T(littleEndian: value)
        }
        for _ in 0..<records.count {
            let pathLength = Int(integer(UInt32.self))
            let path = String(decoding: bytes[at..<at + pathLength], as: UTF8.self)
            at += pathLength
            let size = integer(Int64.self)
            let digest = String(decoding: bytes[at..<at + 64], as: UTF8.self)
            at += 64
            files.append(ExtractedFile(path: path, size: size, sha256: digest))
        }
        return files
    }
}
