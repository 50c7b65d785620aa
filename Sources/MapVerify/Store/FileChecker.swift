import Foundation
import MapFormat
import MapIO

/// One hashing thread's tools and findings: a read buffer and a SHA-256 context reused for every
/// file, and what differed from the manifest. Used by one thread at a time.
///
/// A file the walk listed as regular is opened relative to its folder and read straight away,
/// asking for one byte more than the manifest's size: for the usual file that is one `read`, no
/// `fstat` and no second `read` for the end of file. Anything unexpected (a short or long file, a
/// failed read) takes the careful path: `fstat`, then reading to the real end of file, so the
/// outcome is the one a stat-then-read check gives.
///
/// When it copies (`copy`), each file's bytes are written to the same relative path under the copy
/// folder as they are hashed, so the copy holds exactly the bytes that were checked, read once.
final class FileChecker {
    /// A folder checked files are copied into: its path and an open descriptor.
    struct CopyTarget {
        let root: String
        let descriptor: Int32
    }

    private let store: String
    private let storeDescriptor: Int32
    private let hashContents: Bool
    private let copy: CopyTarget?
    /// The first failure to write a copy (a full disk shows here), when copying.
    private(set) var copyFailure: FileError?
    private let buffer: UnsafeMutableRawBufferPointer
    private let hasher = SHA256()
    /// What differed, in no particular order.
    private(set) var findings: [StoreTreeCheck.Finding] = []
    /// Bytes hashed in files whose size matched.
    private(set) var bytesHashed: Int64 = 0

    /// Bytes per read.
    static let bufferSize = 128 << 10

    init(store: String, storeDescriptor: Int32, hashContents: Bool, copy: CopyTarget? = nil) {
        self.store = store
        self.storeDescriptor = storeDescriptor
        self.hashContents = hashContents || copy != nil
        self.copy = copy
        buffer = .allocate(byteCount: FileChecker.bufferSize, alignment: 64)
    }

    deinit { buffer.deallocate() }

    /// What a file holds, as far as the manifest's claims go.
    private enum Found {
        case missing, notRegular
        case failed(FileError)
        /// The size, when it differs from the manifest's or contents are not hashed.
        case size(Int64)
        /// The size (the manifest's) and the digest.
        case hashed(Int64, SHA256.Digest)
    }

    /// Checks every job of `batch`.
    func check(_ batch: FileCheckBatch) {
        batch.paths.withUnsafeBufferPointer { paths in
            for job in batch.jobs {
                let path = paths.baseAddress! + Int(job.pathStart)
                compare(job, found: inspect(job, path: path), batch: batch)
            }
        }
    }

    private func compare(_ job: FileCheckBatch.Job, found: Found, batch: FileCheckBatch) {
        func add(_ kind: VerifyProblem.Kind, _ detail: String) {
            findings.append(StoreTreeCheck.Finding(kind: kind, path: batch.path(job), bundle: job.bundle, detail: detail))
        }
        switch found {
        case .missing: add(.missing, "file is missing")
        case .notRegular: add(.notRegularFile, "is not a regular file")
        case .failed(let error): add(.missing, error.description)
        case .size(let size):
            if size != job.size { add(.sizeMismatch, "size \(size), manifest says \(job.size)") }
        case .hashed(let size, let digest):
            bytesHashed += size
            if digest != job.sha256 {
                add(.digestMismatch, "content differs (sha256 \(digest.hex), manifest says \(FileCheckBatch.sha256Text(job)))")
            }
        }
    }

    private func inspect(_ job: FileCheckBatch.Job, path: UnsafePointer<UInt8>) -> Found {
        let flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK
        let descriptor = path.withMemoryRebound(to: CChar.self, capacity: Int(job.pathLength) + 1) { path in
            if let directory = job.directory { return openat(directory.descriptor, path + Int(job.nameOffset), flags) }
            if storeDescriptor >= 0 { return openat(storeDescriptor, path, flags) }
            return open(store + "/" + String(cString: path), flags)
        }
        let fullPath = { self.store + "/" + String(decoding: UnsafeBufferPointer(start: path, count: Int(job.pathLength)), as: UTF8.self) }
        if descriptor < 0 {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return .missing }
            if code == ELOOP { return .notRegular }
            return .failed(FileError("open", fullPath(), code: code))
        }
        defer { close(descriptor) }
        if !job.listedRegular || !hashContents {
            if let found = status(descriptor, job: job, path: fullPath) { return found }
        }
        var output: Int32 = -1
        if let copy {
            output = path.withMemoryRebound(to: CChar.self, capacity: Int(job.pathLength) + 1) { path in
                openat(copy.descriptor, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
            }
            if output < 0 { return copyFailed(FileError("open", copyPath(path, job))) }
        }
        defer { if output >= 0 { close(output) } }

        // The fast path: reads that ask for at most one byte past the manifest's size.
        hasher.reset()
        var total: Int64 = 0
        var readError: Int32?
        while true {
            let want = Int(max(0, min(Int64(buffer.count), job.size - total + 1)))
            let count = read(descriptor, buffer.baseAddress, want)
            if count < 0 {
                if errno == EINTR { continue }
                readError = errno
                break
            }
            total += Int64(count)
            if count == 0 || total > job.size { break }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            hasher.update(chunk)
            if output >= 0 {
                do { try FileSystem.writeAll(chunk, to: output, path: copyPath(path, job)) } catch { return copyFailed(error) }
            }
            // A regular file reads short only at its end.
            if count < want { break }
        }
        if readError == nil, total == job.size {
            if output >= 0, fsync(output) != 0 { return copyFailed(FileError("fsync", copyPath(path, job))) }
            return .hashed(total, hasher.finalize())
        }
        // The copy holds only what the fast path read: a file that reads differently is not copied whole.
        if output >= 0 { return .failed(FileError("read", fullPath(), code: readError ?? EIO)) }

        // The careful path: what is it, and how long is it really?
        if job.listedRegular, let found = status(descriptor, job: nil, path: fullPath) { return found }
        if let readError { return .failed(FileError("read", fullPath(), code: readError)) }
        while true {
            let count = read(descriptor, buffer.baseAddress, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                return .failed(FileError("read", fullPath()))
            }
            if count == 0 { break }
            if total + Int64(count) <= job.size { hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) }
            total += Int64(count)
        }
        return total == job.size ? .hashed(total, hasher.finalize()) : .size(total)
    }

    /// Records a failed write of the copy and reports the file as not checked.
    private func copyFailed(_ error: FileError) -> Found {
        if copyFailure == nil { copyFailure = error }
        return .failed(error)
    }

    private func copyPath(_ path: UnsafePointer<UInt8>, _ job: FileCheckBatch.Job) -> String {
        (copy?.root ?? "") + "/" + String(decoding: UnsafeBufferPointer(start: path, count: Int(job.pathLength)), as: UTF8.self)
    }

    /// `fstat`'s verdict: not a regular file, or (for `job`) a size that settles it without reading;
    /// nil to go on reading.
    private func status(_ descriptor: Int32, job: FileCheckBatch.Job?, path: () -> String) -> Found? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return .failed(FileError("fstat", path())) }
        guard info.st_mode & S_IFMT == S_IFREG else { return .notRegular }
        guard let job else { return nil }
        if !hashContents || Int64(info.st_size) != job.size { return .size(Int64(info.st_size)) }
        return nil
    }
}
