import Foundation
import MapFormat
import Synchronization

/// A regular file written by an extraction (or seen by a listing), with its digest.
package struct ExtractedFile: Sendable, Equatable {
    /// Path relative to the extraction root, checked where it entered (`SafeExtractor.cleanPath`, a
    /// manifest's or a shard record's checked path).
    package let path: StorePath
    package let size: Int64
    /// SHA-256 of the content.
    package let sha256: SHA256Digest

    package init(path: StorePath, size: Int64, sha256: SHA256Digest) {
        self.path = path
        self.size = size
        self.sha256 = sha256
    }
}

/// Extracts `.tar.zst` archives by mappack's rules, on the build machine and on devices alike:
/// only regular files and folders with clean relative UTF-8 paths; no links, devices, FIFOs or
/// sockets; no duplicates or case/normalization collisions; nothing under a file; never more
/// bytes or entries than declared; no owners or special mode bits applied. On any refusal every
/// file and folder it created is removed again, so a rejected archive leaves nothing behind.
package struct SafeExtractor {
    /// Bounds for this archive.
    package let limits: ExtractionLimits
    /// Started on each file as soon as it is written whole.
    package let writeback: Writeback
    /// Files are written by a thread of their own while the calling thread decodes and hashes the
    /// entries after them (`PipelinedWriter`), as `zstd -dc | tar -x` splits the work in two.
    package var pipelined = false

    /// Sets the bounds. Nothing is fsynced: each file's writeback is started as soon as it is
    /// complete (`writeback`), and callers make the whole tree durable before a rename shows it
    /// (`FileSystem.syncTree`: the build's outputs, the store's staged trees), which then finds the
    /// disk has taken most of it while the rest was unpacking.
    package init(limits: ExtractionLimits, writeback: Writeback = .kernel) {
        self.limits = limits
        self.writeback = writeback
    }

    /// Tracks what one pass has seen so rules spanning entries can be checked.
    private struct PathLedger {
        /// Case-folded path → the path as first seen. String keys compare by canonical equivalence,
        /// so NFC and NFD spellings of one name fold together too.
        var folded: [String: String] = [:]
        var files = Set<String>()
        var entries = 0
        /// The folder of the last entry admitted: it and every folder above it have been checked and
        /// recorded, and none can become a file later (that entry would collide), so an entry in the
        /// same folder or below it checks only the folders past this one.
        var lastFolder = ""

        /// `text` lower-cased; ASCII (nearly every path) without Unicode tables, and without a copy
        /// when it has no upper-case letter.
        private static func fold(_ text: String) -> String {
            var ascii = true
            var upper = false
            for byte in text.utf8 {
                if byte >= 0x80 {
                    ascii = false
                    break
                }
                if byte >= 0x41 && byte <= 0x5A { upper = true }
            }
            guard ascii else { return text.lowercased() }
            guard upper else { return text }
            return unsafe String(unsafeUninitializedCapacity: text.utf8.count) { buffer in
                var count = 0
                for byte in text.utf8 {
                    unsafe buffer[count] = (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
                    count += 1
                }
                return count
            }
        }

        /// Checks one entry's path against everything seen before and records it.
        mutating func admit(_ path: String, isFile: Bool, limit: Int) throws(ArchiveError) {
            entries += 1
            if entries > limit { throw .tooManyEntries(limit: limit) }
            let key = PathLedger.fold(path)
            if let earlier = folded[key] {
                if earlier.utf8.elementsEqual(path.utf8) {
                    // A folder listed twice is harmless; anything else repeated is not.
                    if isFile || files.contains(path) { throw .duplicatePath(entry: path) }
                    return
                }
                throw .collidingPath(entry: path, earlier: earlier)
            }
            // Every folder above the entry not checked yet: none may be a file, and each is recorded
            // (first spelling wins).
            let bytes = path.utf8
            var index = bytes.index(bytes.startIndex, offsetBy: PathLedger.checkedPrefix(of: path, below: lastFolder))
            var folderEnd = bytes.startIndex
            while let slash = bytes[index...].firstIndex(of: UInt8(ascii: "/")) {
                let prefix = String(path[..<slash])
                index = bytes.index(after: slash)
                folderEnd = slash
                if !files.isEmpty, files.contains(prefix) { throw .underFile(entry: path, file: prefix) }
                let foldedPrefix = PathLedger.fold(prefix)
                if folded[foldedPrefix] == nil { folded[foldedPrefix] = prefix }
            }
            folded[key] = path
            if isFile {
                files.insert(path)
                if folderEnd != bytes.startIndex || lastFolder.isEmpty { lastFolder = String(path[..<folderEnd]) }
            } else {
                lastFolder = path
            }
        }

        /// How many leading bytes of `path` name folders at or above `folder` (a checked folder):
        /// the length of their common part up to a `/` of `path`, or 0.
        private static func checkedPrefix(of path: String, below folder: String) -> Int {
            guard !folder.isEmpty else { return 0 }
            var common = 0
            var boundary = 0
            var p = path.utf8.makeIterator()
            var f = folder.utf8.makeIterator()
            while true {
                guard let a = p.next() else { return boundary }
                guard let b = f.next() else { return a == UInt8(ascii: "/") ? common + 1 : boundary }
                if a != b { return boundary }
                common += 1
                if a == UInt8(ascii: "/") { boundary = common }
            }
        }
    }

    /// Checks an entry name and returns it without a leading `./` and trailing slashes: what is left
    /// must be a `StorePath`, and is one from here on. Works on the name's bytes: every rule is about
    /// ASCII characters.
    package static func cleanPath(_ entry: ArchiveEntry) throws(ArchiveError) -> StorePath {
        guard var name = entry.name else { throw .invalidName(entry: entry.printableName) }
        let checked: Result<String?, StorePath.Problem> = name.withUTF8 { bytes in
            unsafe SafeExtractor.check(bytes).map { range in
                unsafe range.count == bytes.count ? nil : String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
            }
        }
        switch checked {
        case .failure(let rule): throw .unsafePath(entry: name, reason: rule.description)
        case .success(let trimmed): return StorePath(alreadyChecked: trimmed ?? name)
        }
    }

    /// The part of `bytes` that is the path (without a leading `./` and trailing slashes), or the
    /// `StorePath` rule it breaks.
    private static func check(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<Range<Int>, StorePath.Problem> {
        let slash = UInt8(ascii: "/")
        var start = 0
        var end = bytes.count
        if unsafe end >= 2 && bytes[0] == UInt8(ascii: ".") && bytes[1] == slash { start = 2 }
        while unsafe end > start && bytes[end - 1] == slash { end -= 1 }
        if unsafe bytes.first == slash { return .failure(.absolute) }
        if let problem = unsafe StorePath.problem(in: UnsafeBufferPointer(rebasing: bytes[start..<end]).span) {
            return .failure(problem)
        }
        return .success(start..<end)
    }

    /// Lists and hashes every regular file of the archive without writing anything, applying the same rules.
    package func list(archive: String, visit: (ArchiveEntry, String) -> Void = { _, _ in }) throws(ArchiveError) -> [ExtractedFile] {
        try run(archive: archive, destination: nil, visit: visit)
    }

    /// Extracts `archive` into the existing folder `destination`, returning its regular files sorted by path.
    /// With `expectedDigest`, the archive file itself must hash to it, else everything is rolled back
    /// and `.digestMismatch` thrown: a cached bundle is re-checked on every use at the cost of one hash pass.
    /// `folders` shares the folders known to exist between extractions into one staging tree (see `FolderCache`).
    /// `admit` sees every entry (with its clean path) before it is written and may refuse it by throwing,
    /// which rolls the extraction back like any other refusal.
    package func extract(
        archive: String, into destination: String, expectedDigest: SHA256Digest? = nil,
        folders: FolderCache? = nil,
        admit: (ArchiveEntry, String) throws(ArchiveError) -> Void = { _, _ in }
    ) throws(ArchiveError) -> [ExtractedFile] {
        try run(archive: archive, destination: destination, expectedDigest: expectedDigest, folders: folders, visit: admit)
    }

    private func run(
        archive: String, destination: String?, expectedDigest: SHA256Digest? = nil, folders shared: FolderCache? = nil,
        visit: (ArchiveEntry, String) throws(ArchiveError) -> Void
    ) throws(ArchiveError) -> [ExtractedFile] {
        let reader: ArchiveReader
        do {
            reader = try ArchiveReader(path: archive, windowLogMax: limits.windowLogMax, hashing: expectedDigest != nil)
        } catch {
            // Opening decodes the first block already, so damage can surface here too.
            if let expectedDigest, let actual = try? SHA256.digestOfFile(archive).digest, actual != expectedDigest {
                throw .digestMismatch(expected: expectedDigest, actual: actual)
            }
            throw error
        }
        // Files and folders are made relative to the destination's descriptor: no long absolute
        // path is built, or walked by the kernel, per entry.
        var target: Target?
        var root: FileDescriptor?
        if let destination {
            let descriptor: FileDescriptor
            do { descriptor = try unsafe FileDescriptor.open(destination, .readOnly, options: [.directory, .followLinks]) } catch {
                throw .io(FileError(.open, destination, code: error.code))
            }
            root = descriptor
            target = Target(root: destination, descriptor: descriptor, shared: shared, writeback: writeback)
        }
        // Closed after the writing thread, if any, has ended (`finishWriting`).
        defer { try? root?.close() }
        var writer: PipelinedWriter?
        if pipelined, let owned = target {
            writer = PipelinedWriter(target: owned)
            target = nil
        }
        /// Waits for the writing thread (after it wrote what it was given) and takes the target back;
        /// its first failure, which came from an entry before any the calling thread refused.
        func finishWriting() -> ArchiveError? {
            guard let running = writer else { return nil }
            writer = nil
            let (owned, failure) = running.finish()
            target = owned
            return failure
        }
        var ledger = PathLedger()
        var results: [ExtractedFile] = []
        var total: Int64 = 0
        let hasher = SHA256()
        do throws(ArchiveError) {
            while let entry = try reader.next() {
                let storePath = try SafeExtractor.cleanPath(entry)
                let path = storePath.string
                switch entry.kind {
                case .regular: break
                case .directory: break
                case .symlink: throw ArchiveError.forbiddenType(entry: path, type: "symbolic link")
                case .hardlink: throw ArchiveError.forbiddenType(entry: path, type: "hard link")
                case .other(let type): throw ArchiveError.forbiddenType(entry: path, type: type)
                }
                try ledger.admit(path, isFile: entry.kind == .regular, limit: limits.maxEntries)
                try visit(entry, path)
                if entry.kind == .directory {
                    if let writer { writer.makeFolder(path) } else { try target?.makeFolder(path, for: path) }
                    continue
                }
                if entry.size < 0 || entry.size > limits.maxBytes - total { throw ArchiveError.tooLarge(entry: path, limit: limits.maxBytes) }
                let output = try target?.create(path)
                writer?.open(path)
                hasher.reset()
                var size: Int64 = 0
                do throws(ArchiveError) {
                    while true {
                        // Straight from the decoder's output: no copy before hashing and writing.
                        let chunk = try unsafe reader.nextChunk()
                        if unsafe chunk.isEmpty { break }
                        size += Int64(chunk.count)
                        total += Int64(chunk.count)
                        if total > limits.maxBytes { throw ArchiveError.tooLarge(entry: path, limit: limits.maxBytes) }
                        unsafe hasher.update(chunk)
                        if let output, let target { try unsafe target.write(chunk, to: output, path: path) }
                        if let writer { unsafe writer.write(chunk) }
                    }
                } catch {
                    try? output?.close()
                    throw error
                }
                if let output, let target { try target.finish(output, path: path) }
                if let writer {
                    writer.close()
                    if writer.hasFailed, let failure = finishWriting() { throw failure }
                }
                results.append(ExtractedFile(path: storePath, size: size, sha256: hasher.finalize()))
            }
            if let failure = finishWriting() { throw failure }
            if let expectedDigest, let actual = try reader.compressedDigest(), actual != expectedDigest {
                throw ArchiveError.digestMismatch(expected: expectedDigest, actual: actual)
            }
        } catch {
            // The writing thread's failure came first (an entry before this one), as it would have
            // without the thread.
            let error = finishWriting() ?? error
            target?.rollBack()
            // Damage anywhere in the file can break the stream before its end: say so rather than blame the archive.
            if let expectedDigest, !error.isDigestMismatch, let actual = try? reader.compressedDigest(), actual != expectedDigest {
                throw ArchiveError.digestMismatch(expected: expectedDigest, actual: actual)
            }
            throw error
        }
        return results.sorted { $0.path.string.utf8.lexicographicallyPrecedes($1.path.string.utf8) }
    }

    /// The destination folder of an extraction: its descriptor, the folders known to exist in it,
    /// and everything created in it (relative paths, in order), for a rollback.
    struct Target {
        let root: String
        let descriptor: FileDescriptor
        let shared: FolderCache?
        let writeback: Writeback
        var created: [String] = []
        /// Folders this extraction made or checked (relative paths).
        var known = Set<String>()
        /// The folder of the last file created, known to exist.
        var lastFolder = ""

        init(root: String, descriptor: FileDescriptor, shared: FolderCache?, writeback: Writeback) {
            self.root = root
            self.descriptor = descriptor
            self.shared = shared
            self.writeback = writeback
        }

        /// Creates the new file `path` (its folders first), open for writing.
        mutating func create(_ path: String) throws(ArchiveError) -> FileDescriptor {
            if let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) {
                // Files of one folder come one after another: compare bytes before building a string.
                let folder = path.utf8[..<slash]
                if !folder.elementsEqual(lastFolder.utf8) {
                    let name = String(path[..<slash])
                    try makeFolder(name, for: path)
                    lastFolder = name
                }
            }
            let file: FileDescriptor
            do { file = try unsafe FileDescriptor.open(at: descriptor, path, .writeOnly, options: [.create, .exclusive]) } catch {
                throw .io(FileError(.open, root + "/" + path, code: error.code))
            }
            created.append(path)
            return file
        }

        func write(_ bytes: UnsafeRawBufferPointer, to file: FileDescriptor, path: String) throws(ArchiveError) {
            // The full path is built only for the error.
            do { try unsafe file.writeAll(bytes) } catch { throw .io(FileError(.write, root + "/" + path, code: error.code)) }
        }

        /// Starts the writeback of a file written completely and closes it.
        func finish(_ file: FileDescriptor, path: String) throws(ArchiveError) {
            writeback.start(file)
            do { try file.close() } catch { throw .io(FileError(.close, root + "/" + path, code: error.code)) }
        }

        /// Makes the folder `relative` and any missing folder above it (for the archive entry
        /// `entry`), recording the ones it made. Folders this extraction (or, with `shared`, another
        /// one into the same tree) already made or checked need no syscall again.
        mutating func makeFolder(_ relative: String, for entry: String) throws(ArchiveError) {
            if known.contains(relative) { return }
            let absolute = root + "/" + relative
            if let shared, shared.contains(absolute) {
                known.insert(relative)
                return
            }
            if let slash = relative.utf8.lastIndex(of: UInt8(ascii: "/")) { try makeFolder(String(relative[..<slash]), for: entry) }
            do {
                try unsafe descriptor.makeDirectory(relative)
                unsafe descriptor.spreadSubfolders(of: relative)
                created.append(relative)
            } catch  where error.code == EEXIST {
                // Only a real folder may already be there: never follow a link planted by someone else.
                guard let info = try? unsafe descriptor.status(ofEntry: relative), info.isDirectory else {
                    throw .underFile(entry: entry, file: relative)
                }
            } catch {
                throw .io(FileError(.mkdir, absolute, code: error.code))
            }
            known.insert(relative)
            shared?.insert(absolute)
        }

        /// Removes everything created, newest first.
        func rollBack() {
            for path in created.reversed() { try? FileSystem.removeTree(root + "/" + path) }
        }
    }
}

/// Folders known to exist in one staging tree, shared by the extractions into it, so a folder that
/// many bundles write into is created or checked once rather than once per bundle. Bounded: it
/// forgets everything past `limit` entries (those folders are then checked again).
///
/// Only for trees that are thrown away whole when any extraction fails (a build's staging): an
/// extraction that is rolled back removes the folders it created even if another one used them.
package final class FolderCache: Sendable {
    private let known = Mutex<Set<String>>([])
    private let limit: Int

    /// A cache of at most `limit` folders.
    package init(limit: Int = 4096) { self.limit = limit }

    /// True when `path` is known to exist.
    package func contains(_ path: String) -> Bool { known.withLock { $0.contains(path) } }

    /// Records that `path` exists.
    package func insert(_ path: String) {
        known.withLock { set in
            if set.count >= limit { set.removeAll(keepingCapacity: true) }
            set.insert(path)
        }
    }
}
