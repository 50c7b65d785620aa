import Foundation
import MapFormat
import Synchronization

/// Compares a store tree with a manifest's file entries given in path order (bytewise UTF-8, the
/// order manifests are written in), in one pass over both: the tree is walked in the same order
/// (`DirectoryWalker.SortedWalk`) and merged with the entries, so a missing or extra file shows
/// up as one side running ahead, with no set of all paths in memory. Files found are hashed by
/// `jobs` threads fed through a bounded queue while the calling thread walks and reads on.
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

    /// Checks against the tree at `store` (hashing contents when `hashContents`) on `jobs` threads.
    package init(store: String, hashContents: Bool, jobs: Int) {
        self.store = store
        self.hashContents = hashContents
        self.jobs = max(1, jobs)
    }

    /// Runs the check: `feed` passes every manifest entry, in path order, to the merge it is
    /// given. When `feed` throws, the hashers stop and the error is rethrown.
    package func run<Failure: Error>(_ feed: (inout Merge) throws(Failure) -> Void) throws(Failure) -> Outcome {
        guard FileSystem.isDirectory(store) else {
            var merge = Merge(store: store, queue: nil)
            try feed(&merge)
            return Outcome(findings: [Finding(kind: .missing, path: ImageManifest.storeFolder, bundle: nil, detail: "store folder is missing")], files: 0, bytes: 0)
        }
        let storeDescriptor = open(store, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { if storeDescriptor >= 0 { close(storeDescriptor) } }
        let queue = FileCheckQueue(capacity: 2 * jobs + 2)
        let results = Results()
        let done = DispatchGroup()
        for _ in 0..<jobs {
            done.enter()
            let thread = Thread { [store, hashContents] in
                let checker = FileChecker(store: store, storeDescriptor: storeDescriptor, hashContents: hashContents)
                while let batch = queue.take() {
                    if !queue.isCancelled { checker.check(batch) }
                    queue.recycle(batch)
                }
                results.state.withLock { $0.findings += checker.findings; $0.bytes += checker.bytesHashed }
                done.leave()
            }
            thread.name = "mappack-verify"
            thread.start()
        }
        var merge = Merge(store: store, queue: queue)
        do throws(Failure) {
            try feed(&merge)
        } catch {
            queue.cancel()
            queue.close()
            done.wait()
            throw error
        }
        let own = merge.finish()
        queue.close()
        done.wait()
        let (findings, bytes) = results.state.withLock { ($0.findings, $0.bytes) }
        return Outcome(findings: own + findings, files: merge.files, bytes: bytes)
    }

    /// What the hashing threads found, gathered as each one ends.
    private final class Results: Sendable {
        let state = Mutex<(findings: [Finding], bytes: Int64)>(([], 0))
    }

    /// The producer's side: walks the tree alongside the entries it is given, reports what only
    /// the tree has, and queues the rest for the hashers.
    package struct Merge {
        private let store: String
        private let queue: FileCheckQueue?
        private var walk: DirectoryWalker.SortedWalk?
        /// The walk has a current entry.
        private var walkHasEntry = false
        private var batch: FileCheckBatch
        private var extras: [Finding] = []
        private var walkFailure: Finding?
        private var previous: [UInt8] = []
        /// Entries given so far.
        private(set) var files = 0

        init(store: String, queue: FileCheckQueue?) {
            self.store = store
            self.queue = queue
            batch = queue?.emptyBatch() ?? FileCheckBatch()
            guard queue != nil else { return }
            do throws(FileError) {
                walk = try DirectoryWalker.SortedWalk(root: store)
                walkHasEntry = try walk!.next()
            } catch {
                failWalk(error)
            }
        }

        /// Checks one manifest entry.
        package mutating func check(_ file: ImageFile) {
            files += 1
            guard queue != nil else { return }
            var path = file.path
            path.withUTF8 { path in
                let bytes = UnsafeRawBufferPointer(path)
                // Out of order: the walk has gone past it, so open it by path.
                let ordered = previous.withUnsafeBytes { StoreTreeCheck.compare($0, bytes) < 0 } || files == 1
                var found: (directory: DirectoryWalker.OpenDirectory, nameOffset: Int, regular: Bool)?
                if ordered {
                    previous.removeAll(keepingCapacity: true)
                    previous.append(contentsOf: bytes)
                    var order = 1
                    while walkHasEntry {
                        order = walk!.path.withUnsafeBytes { StoreTreeCheck.compare($0, bytes) }
                        guard order < 0 else { break }
                        addExtra()
                        advance()
                    }
                    if walkHasEntry && order == 0 {
                        found = (walk!.directory, walk!.nameOffset, walk!.kind == .regular)
                        advance()
                    }
                }
                batch.add(file, path: bytes, found: found)
            }
            if batch.isFull { flush() }
        }

        /// Hands the current batch to the hashers.
        mutating func flush() {
            guard let queue, !batch.isEmpty else { return }
            queue.put(batch)
            batch = queue.emptyBatch()
        }

        /// Reports what is left of the tree and hands over the last batch; returns the
        /// producer's own findings.
        mutating func finish() -> [Finding] {
            while walkHasEntry {
                addExtra()
                advance()
            }
            flush()
            walk = nil
            if let walkFailure { return [walkFailure] }
            return extras
        }

        private mutating func addExtra() {
            let path = String(decoding: walk!.path, as: UTF8.self)
            extras.append(walk!.kind == .regular
                ? Finding(kind: .extra, path: path, bundle: nil, detail: "file is not in the manifest")
                : Finding(kind: .extra, path: path, bundle: nil, detail: "is not a regular file or folder, and not in the manifest"))
        }

        private mutating func advance() {
            do throws(FileError) { walkHasEntry = try walk!.next() } catch { failWalk(error) }
        }

        /// A folder that cannot be listed makes the listing worthless: no file is called extra,
        /// and the rest of the entries are opened by path.
        private mutating func failWalk(_ error: FileError) {
            walkFailure = Finding(kind: .missing, path: ImageManifest.storeFolder, bundle: nil, detail: error.description)
            extras = []
            walk = nil
            walkHasEntry = false
        }

    }

    /// Bytewise order of two paths (negative, zero, positive), a prefix first.
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        if common > 0 {
            let order = memcmp(a.baseAddress!, b.baseAddress!, common)
            if order != 0 { return Int(order) }
        }
        return a.count - b.count
    }
}
