import MapFormat
import MapIO

/// A run of manifest files for one worker to check, with their paths in one buffer: handing
/// files over in batches keeps locking rare, and one buffer per batch keeps the hot path free of
/// per-file allocations. Batches are reused.
struct FileCheckBatch: ReusableBatch {
    /// One file to check.
    struct Job: Sendable {
        /// The folder holding the file when the walk found it there (opened relative to it);
        /// nil to open the path from the store's root.
        var directory: DirectoryWalker.OpenDirectory?
        /// The store-relative path in `paths`, followed by a NUL.
        var pathStart: Int32
        var pathLength: Int32
        /// Where the last component starts, from `pathStart` (with `directory`).
        var nameOffset: Int32
        /// The walk saw a regular file here (then a plain read decides, with no `fstat`).
        var listedRegular: Bool
        /// What the manifest says.
        var size: Int64
        var sha256: SHA256Digest
        var bundle: BundleDigest
    }

    private(set) var jobs: [Job] = []
    private(set) var paths: [UInt8] = []

    init() {}

    /// Room for this many jobs per batch: a few milliseconds of hashing, so hand-overs (each a
    /// possible wake-up of a sleeping thread) are rare; 48 made a check of 57,849 files switch
    /// threads about 1,400 times, 192 about 350 (issue 34).
    static let capacity = 192

    var isFull: Bool { jobs.count >= FileCheckBatch.capacity }
    var isEmpty: Bool { jobs.isEmpty }

    /// Adds `file`; `found` is where the walk saw it, if it did.
    mutating func add(_ file: ManifestStream.FileEntry, found: ListedEntries.Entry?) {
        let path = unsafe file.path
        let start = paths.count
        unsafe paths.append(contentsOf: path)
        paths.append(0)
        jobs.append(
            Job(
                directory: found?.directory, pathStart: Int32(start), pathLength: Int32(path.count), nameOffset: found?.nameOffset ?? 0,
                listedRegular: found?.isRegular ?? false, size: file.size,
                sha256: file.sha256, bundle: file.bundle))
    }

    /// Empties the batch, keeping its buffers.
    mutating func removeAll() {
        jobs.removeAll(keepingCapacity: true)
        paths.removeAll(keepingCapacity: true)
    }

    /// The store-relative path of `job`.
    func path(_ job: Job) -> String {
        String(decoding: paths[Int(job.pathStart)..<Int(job.pathStart + job.pathLength)], as: UTF8.self)
    }
}
