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
/// folder as they are read (and hashed, with `hashContents`), so the copy holds exactly the bytes
/// that were checked, read once. Without hashing, the copy's reads are what checks the size.
@safe final class FileChecker {
    /// A folder checked files are copied into: its path, an open descriptor, and the writeback
    /// started on each copy once it is whole (the caller syncs the copied tree before using it).
    struct CopyTarget {
        let root: String
        let descriptor: FileDescriptor
        var writeback: Writeback? = .kernel
    }

    private let store: String
    /// The store folder, opened; nil when it could not be (files are then opened by full path).
    private let storeDescriptor: FileDescriptor?
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
    /// Files are opened without updating their access time while the system allows it
    /// (`FileDescriptor.openForReading`): a check leaves the tree as it found it, and the first
    /// check after a build does not write every inode back.
    private var quietly = true

    /// True when every listed file is read to its end: its bytes are hashed or copied, and those
    /// reads settle its size (else one `fstat` does).
    private var readsWholeFiles: Bool { hashContents || copy != nil }

    /// Bytes per read.
    static let bufferSize = 128 << 10

    init(store: String, storeDescriptor: FileDescriptor?, hashContents: Bool, copy: CopyTarget? = nil) {
        self.store = store
        self.storeDescriptor = storeDescriptor
        self.hashContents = hashContents
        self.copy = copy
        unsafe buffer = .allocate(byteCount: FileChecker.bufferSize, alignment: 64)
    }

    deinit { unsafe buffer.deallocate() }

    /// What a file holds, as far as the manifest's claims go.
    private enum Found {
        case missing, notRegular
        case failed(FileError)
        /// The size, when it differs from the manifest's or contents are not hashed.
        case size(Int64)
        /// The size (the manifest's) and the digest.
        case hashed(Int64, SHA256Digest)
    }

    /// Checks every job of `batch`, or the jobs before `stop` (asked before each file) says to stop.
    func check(_ batch: FileCheckBatch, stop: () -> Bool = { false }) {
        unsafe batch.paths.withUnsafeBufferPointer { paths in
            for job in batch.jobs {
                if stop() { return }
                let path = unsafe paths.baseAddress! + Int(job.pathStart)
                let found = unsafe path.withMemoryRebound(to: CChar.self, capacity: Int(job.pathLength) + 1) { unsafe inspect(job, path: $0) }
                compare(job, found: found, batch: batch)
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
                add(.digestMismatch, "content differs (sha256 \(digest.hex), manifest says \(job.sha256.hex))")
            }
        }
    }

    /// `path`: the job's path relative to the store, NUL-terminated.
    private func inspect(_ job: FileCheckBatch.Job, path: UnsafePointer<CChar>) -> Found {
        let fullPath = { unsafe self.store + "/" + String(decoding: UnsafeRawBufferPointer(start: path, count: Int(job.pathLength)), as: UTF8.self) }
        let descriptor: FileDescriptor
        do {
            if let directory = job.directory {
                descriptor = try unsafe FileDescriptor.openForReading(
                    at: directory.descriptor, path + Int(job.nameOffset), options: .nonBlocking, quietly: &quietly)
            } else if let storeDescriptor {
                descriptor = try unsafe FileDescriptor.openForReading(at: storeDescriptor, path, options: .nonBlocking, quietly: &quietly)
            } else {
                descriptor = try unsafe FileDescriptor.openForReading(store + "/" + String(cString: path), options: .nonBlocking, quietly: &quietly)
            }
        } catch {
            if error.code == ENOENT || error.code == ENOTDIR { return .missing }
            if error.code == ELOOP { return .notRegular }
            return .failed(FileError(.open, fullPath(), code: error.code))
        }
        defer { try? descriptor.close() }
        if !job.listedRegular || !readsWholeFiles {
            if let found = status(descriptor, job: job, path: fullPath) { return found }
        }
        var output: FileDescriptor?
        if let copy {
            do { output = try unsafe FileDescriptor.open(at: copy.descriptor, path, .writeOnly, options: [.create, .truncate]) } catch {
                return unsafe copyFailed(FileError(.open, copyPath(path, job), code: error.code))
            }
        }
        defer { try? output?.close() }
        // Without hashing, a filesystem that can share extents (`FICLONE`) copies with no data read
        // or written; the clone's size is then what checks the file's.
        if !hashContents, job.listedRegular, let output {
            do {
                if try output.cloneContents(of: descriptor) {
                    let info: FileSystem.Status
                    do { info = try output.status() } catch { return unsafe copyFailed(FileError(.fstat, copyPath(path, job), code: error.code)) }
                    if info.size == job.size, let writeback = copy?.writeback { writeback.start(output) }
                    return .size(info.size)
                }
            } catch { return unsafe copyFailed(FileError(.clone, copyPath(path, job), code: error.code)) }
        }

        // The fast path: reads that ask for at most one byte past the manifest's size.
        if hashContents { hasher.reset() }
        var total: Int64 = 0
        var readError: Int32?
        while true {
            let want = unsafe Int(max(0, min(Int64(buffer.count), job.size - total + 1)))
            let count: Int
            do { count = try unsafe descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want])) } catch {
                readError = error.code
                break
            }
            total += Int64(count)
            if count == 0 || total > job.size { break }
            let chunk = unsafe UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            if hashContents { unsafe hasher.update(chunk) }
            if let output {
                do { try unsafe output.writeAll(chunk) } catch { return unsafe copyFailed(FileError(.write, copyPath(path, job), code: error.code)) }
            }
            // A regular file reads short only at its end.
            if count < want { break }
        }
        if readError == nil, total == job.size {
            if let output, let writeback = copy?.writeback { writeback.start(output) }
            return hashContents ? .hashed(total, hasher.finalize()) : .size(total)
        }
        // The copy holds only what the fast path read: a file that reads differently is not copied
        // whole, and never passes. Another size is said as a check without a copy says it.
        if output != nil {
            if readError == nil, let info = try? descriptor.status(), info.isRegular, info.size != job.size { return .size(info.size) }
            return .failed(FileError(.read, fullPath(), code: readError ?? EIO))
        }

        // The careful path: what is it, and how long is it really?
        if job.listedRegular, let found = status(descriptor, job: nil, path: fullPath) { return found }
        if let readError { return .failed(FileError(.read, fullPath(), code: readError)) }
        while true {
            let count: Int
            do { count = try unsafe descriptor.read(into: buffer) } catch { return .failed(FileError(.read, fullPath(), code: error.code)) }
            if count == 0 { break }
            if total + Int64(count) <= job.size { unsafe hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) }
            total += Int64(count)
        }
        return total == job.size ? .hashed(total, hasher.finalize()) : .size(total)
    }

    /// Records a failed write of the copy and reports the file as not checked.
    private func copyFailed(_ error: FileError) -> Found {
        if copyFailure == nil { copyFailure = error }
        return .failed(error)
    }

    private func copyPath(_ path: UnsafePointer<CChar>, _ job: FileCheckBatch.Job) -> String {
        unsafe (copy?.root ?? "") + "/" + String(decoding: UnsafeRawBufferPointer(start: path, count: Int(job.pathLength)), as: UTF8.self)
    }

    /// `fstat`'s verdict: not a regular file, or (for `job`) a size that settles it without reading;
    /// nil to go on reading.
    private func status(_ descriptor: FileDescriptor, job: FileCheckBatch.Job?, path: () -> String) -> Found? {
        let info: FileSystem.Status
        do { info = try descriptor.status() } catch { return .failed(FileError(.fstat, path(), code: error.code)) }
        guard info.isRegular else { return .notRegular }
        guard let job else { return nil }
        if !readsWholeFiles || info.size != job.size { return .size(info.size) }
        return nil
    }
}
