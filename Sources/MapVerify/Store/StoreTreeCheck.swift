import Foundation
import MapFormat
import MapIO
import Synchronization

/// Compares a store tree with a manifest's file entries given in path order (bytewise UTF-8, the
/// order manifests are written in), in one pass over both: the tree is walked in the same order
/// (`DirectoryWalker.SortedWalk`) and merged with the entries, so a missing or extra file shows
/// up as one side running ahead, with no set of all paths in memory.
///
/// Three kinds of threads share the work, joined by bounded queues: one walks the store, the
/// calling thread reads the manifest and merges, and `jobs` threads open and hash the files.
///
/// Entries out of order still get checked (opened by path), but the walk cannot vouch for
/// them, so callers pass sorted entries (`verifyTree` sorts; the streaming reader refuses
/// unsorted manifests).
package struct StoreTreeCheck {
    /// One difference, before its regions are known (a manifest lists regions after files).
    package struct Finding: Sendable {
        let kind: VerifyProblem.Kind
        let path: String
        let bundle: BundleDigest?
        let detail: String
    }

    /// What a check found.
    package struct Outcome: Sendable {
        let findings: [Finding]
        /// Manifest entries checked (0 when the store folder is missing).
        package let files: Int
        /// Bytes hashed in files of the right size.
        package let bytes: Int64
        /// When copying: the first write of the copy that failed.
        package var copyFailure: FileError?

        /// The problems, sorted by path, with the regions owning each file's bundle.
        package func problems(owners: [BundleDigest: [RegionID]]) -> [VerifyProblem] {
            findings.map { finding in
                VerifyProblem(kind: finding.kind, path: finding.path, regions: finding.bundle.flatMap { owners[$0] } ?? [], detail: finding.detail)
            }.sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
        }
    }

    private let store: String
    private let hashContents: Bool
    private let jobs: Int
    private let copyFolder: String?
    private let writeback: Writeback?
    private let stop: @Sendable () -> Bool

    /// Checks against the tree at `store` (hashing contents when `hashContents`) on `jobs` threads.
    /// With `copyingTo` (an existing folder), each checked file is also written there from the
    /// bytes that were read (and hashed), its writeback started once it is whole (`writeback`; not
    /// fsynced: the caller syncs the copied tree); the merge makes each file's folders first, in
    /// path order (`CopyFolders`). `stop` is asked by the hashing threads before each file: once
    /// it says true, no further file is opened (the outcome is then partial, and the caller
    /// discards it).
    package init(
        store: String, hashContents: Bool, jobs: Int, copyingTo copyFolder: String? = nil, writeback: Writeback? = .kernel,
        stop: @escaping @Sendable () -> Bool = { false }
    ) {
        self.store = store
        self.hashContents = hashContents
        self.jobs = max(1, jobs)
        self.copyFolder = copyFolder
        self.writeback = writeback
        self.stop = stop
    }

    /// Runs the check: `feed` passes every manifest entry, in path order, to the merge it is
    /// given. When `feed` throws, the other threads stop and the error is rethrown.
    package func run<Failure: Error>(_ feed: (inout Merge) throws(Failure) -> Void) throws(Failure) -> Outcome {
        guard FileSystem.isDirectory(store) else {
            var merge = Merge(listed: nil, files: nil)
            try feed(&merge)
            return Outcome(
                findings: [Finding(kind: .missing, path: ImageManifest.storeFolder, bundle: nil, detail: "store folder is missing")], files: 0,
                bytes: 0)
        }
        let storeDescriptor = try? unsafe FileDescriptor.open(store, .readOnly, options: [.directory, .followLinks])
        defer { try? storeDescriptor?.close() }
        let copy: FileChecker.CopyTarget?
        if let copyFolder {
            do {
                copy = unsafe FileChecker.CopyTarget(
                    root: copyFolder, descriptor: try FileDescriptor.open(copyFolder, .readOnly, options: [.directory, .followLinks]),
                    writeback: writeback)
            } catch {
                var outcome = Outcome(findings: [], files: 0, bytes: 0)
                outcome.copyFailure = FileError(.open, copyFolder, code: error.code)
                return outcome
            }
        } else {
            copy = nil
        }
        defer { if let copy { try? copy.descriptor.close() } }
        let listed = BatchQueue<ListedEntries>(capacity: 4)
        let files = BatchQueue<FileCheckBatch>(capacity: 2 * jobs + 2)
        let results = Results()
        let done = DispatchGroup()
        start("mappack-walk", done) { [store] in StoreTreeCheck.walk(store, into: listed) }
        for _ in 0..<jobs {
            start("mappack-hash", done) { [store, hashContents, stop] in
                let checker = FileChecker(store: store, storeDescriptor: storeDescriptor, hashContents: hashContents, copy: copy)
                while let batch = files.take() {
                    // The queue's own cancel (a failed feed) is checked per batch, as it takes its lock;
                    // the caller's `stop` (an atomic flag) per file.
                    if !files.isCancelled, !stop() { checker.check(batch, stop: stop) }
                    files.recycle(batch)
                }
                results.state.withLock {
                    $0.findings += checker.findings
                    $0.bytes += checker.bytesHashed
                    if $0.copyFailure == nil { $0.copyFailure = checker.copyFailure }
                }
            }
        }
        var merge = Merge(listed: listed, files: files)
        if let copy { merge.folders = CopyFolders(root: copy.descriptor, rootPath: copy.root) }
        do throws(Failure) {
            try feed(&merge)
        } catch {
            listed.cancel()
            files.cancel()
            files.close()
            done.wait()
            throw error
        }
        let own = merge.finish()
        files.close()
        done.wait()
        let (findings, bytes, copyFailure) = results.state.withLock { ($0.findings, $0.bytes, $0.copyFailure) }
        var outcome = Outcome(findings: own + findings, files: merge.files, bytes: bytes)
        // A folder that could not be made comes first: its files failed because of it.
        outcome.copyFailure = merge.folderFailure ?? copyFailure
        return outcome
    }

    /// Runs `body` on a thread of its own, in `group`.
    private func start(_ name: String, _ group: DispatchGroup, _ body: @escaping @Sendable () -> Void) {
        group.enter()
        let thread = Thread {
            body()
            group.leave()
        }
        thread.name = name
        thread.start()
    }

    /// The walking thread: lists the store in path order into `queue`, ending with the failure
    /// that stopped the walk, if any.
    private static func walk(_ store: String, into queue: BatchQueue<ListedEntries>) {
        var batch = queue.emptyBatch()
        do throws(FileError) {
            var walk = try DirectoryWalker.SortedWalk(root: store)
            while try walk.next() {
                batch.add(walk)
                guard batch.isFull else { continue }
                guard queue.put(batch) else { return }
                batch = queue.emptyBatch()
            }
        } catch {
            batch.failure = error
        }
        queue.put(batch)
        queue.close()
    }

    /// What the hashing threads found, gathered as each one ends.
    private final class Results: Sendable {
        let state = Mutex<(findings: [Finding], bytes: Int64, copyFailure: FileError?)>(([], 0, nil))
    }

    /// The calling thread's side: takes the walk's entries alongside the manifest's, reports what
    /// only the tree has, and queues the rest for the hashers.
    package struct Merge {
        private let listed: BatchQueue<ListedEntries>?
        private let queue: BatchQueue<FileCheckBatch>?
        /// The walk's batch being merged, and the position in it; nil when the walk is over.
        private var entries: ListedEntries?
        private var position = 0
        private var batch: FileCheckBatch
        private var extras: [Finding] = []
        private var walkFailure: Finding?
        private var previous: [UInt8] = []
        /// Entries given so far.
        private(set) var files = 0
        /// When copying: makes each entry's folders in the copy before its file is queued.
        fileprivate var folders: CopyFolders?
        /// The first folder of the copy that could not be made.
        fileprivate private(set) var folderFailure: FileError?
        private var pathBytes: [UInt8] = []

        init(listed: BatchQueue<ListedEntries>?, files: BatchQueue<FileCheckBatch>?) {
            self.listed = listed
            queue = files
            batch = files?.emptyBatch() ?? FileCheckBatch()
            entries = listed?.emptyBatch()
            nextEntry()
        }

        /// Checks one manifest entry.
        package mutating func check(_ file: ManifestStream.FileEntry) {
            files += 1
            guard queue != nil else { return }
            let path = unsafe file.path
            var found: ListedEntries.Entry?
            // Out of order: the walk has gone past it, so it is opened by path.
            if unsafe files == 1 || StoreTreeCheck.compare(previous.span.bytes, path.bytes) < 0 {
                previous.removeAll(keepingCapacity: true)
                unsafe previous.append(contentsOf: path)
                while let entries {
                    let entry = entries.entries[position]
                    let order = entries.withPath(entry) { unsafe StoreTreeCheck.compare($0.bytes, path.bytes) }
                    if order > 0 { break }
                    if order == 0 { found = entry } else { addExtra(entry) }
                    position += 1
                    nextEntry()
                    if order == 0 { break }
                }
            }
            if folders != nil, folderFailure == nil {
                pathBytes.removeAll(keepingCapacity: true)
                unsafe pathBytes.append(contentsOf: path)
                do { try folders!.makeParents(of: pathBytes) } catch { folderFailure = error }
            }
            batch.add(file, found: found)
            if batch.isFull { flush() }
        }

        /// Hands the current batch to the hashers.
        private mutating func flush() {
            guard let queue, !batch.isEmpty else { return }
            queue.put(batch)
            batch = queue.emptyBatch()
        }

        /// Reports what is left of the tree and hands over the last batch; returns the
        /// producer's own findings.
        mutating func finish() -> [Finding] {
            while let entries {
                addExtra(entries.entries[position])
                position += 1
                nextEntry()
            }
            flush()
            if let walkFailure { return [walkFailure] }
            return extras
        }

        private mutating func addExtra(_ entry: ListedEntries.Entry) {
            let path = entries!.withPath(entry) { unsafe RawBytes.string($0.bytes) }
            extras.append(
                entry.isRegular
                    ? Finding(kind: .extra, path: path, bundle: nil, detail: "file is not in the manifest")
                    : Finding(kind: .extra, path: path, bundle: nil, detail: "is not a regular file or folder, and not in the manifest"))
        }

        /// Moves to the walk's next entry, taking batches as they come; at the end of the walk,
        /// `entries` becomes nil.
        private mutating func nextEntry() {
            while let current = entries, position == current.entries.count {
                if let failure = current.failure { failWalk(failure) }
                listed?.recycle(current)
                entries = walkFailure == nil ? listed?.take() : nil
                position = 0
            }
        }

        /// A folder that cannot be listed makes the listing worthless: no file is called extra,
        /// and the rest of the entries are opened by path.
        private mutating func failWalk(_ error: FileError) {
            walkFailure = Finding(kind: .missing, path: ImageManifest.storeFolder, bundle: nil, detail: error.description)
            extras = []
            listed?.cancel()
        }
    }

    /// Bytewise order of two paths (negative, zero, positive), a prefix first.
    static func compare(_ a: RawSpan, _ b: RawSpan) -> Int { RawBytes.compare(a, b) }
}
