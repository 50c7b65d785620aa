import Foundation
import Synchronization

/// A regular file written by an extraction (or seen by a listing), with its digest.
package struct ExtractedFile: Sendable, Equatable {
    /// Path relative to the extraction root.
    package let path: String
    package let size: Int64
    /// Hex SHA-256 of the content.
    package let sha256: String

    package init(path: String, size: Int64, sha256: String) { self.path = path; self.size = size; self.sha256 = sha256 }
}

/// Extracts `.tar.zst` archives by mappack's rules, on the build machine and on devices alike:
/// only regular files and folders with clean relative UTF-8 paths; no links, devices, FIFOs or
/// sockets; no duplicates or case/normalization collisions; nothing under a file; never more
/// bytes or entries than declared; no owners or special mode bits applied. On any refusal every
/// file and folder it created is removed again, so a rejected archive leaves nothing behind.
package struct SafeExtractor {
    /// Bounds for this archive.
    package let limits: ExtractionLimits
    /// fsync every file and folder written (device installs); builds rely on the final rename instead.
    package let durable: Bool

    /// Sets the bounds.
    package init(limits: ExtractionLimits, durable: Bool) { self.limits = limits; self.durable = durable }

    /// Tracks what one pass has seen so rules spanning entries can be checked.
    private struct PathLedger {
        /// Case-folded path → the path as first seen. String keys compare by canonical equivalence,
        /// so NFC and NFD spellings of one name fold together too.
        var folded: [String: String] = [:]
        var files = Set<String>()
        var entries = 0

        /// `text` lower-cased; ASCII (nearly every path) without Unicode tables.
        private static func fold(_ text: Substring) -> String {
            var ascii = true
            for byte in text.utf8 where byte >= 0x80 { ascii = false; break }
            guard ascii else { return text.lowercased() }
            return String(unsafeUninitializedCapacity: text.utf8.count) { buffer in
                var count = 0
                for byte in text.utf8 {
                    buffer[count] = (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
                    count += 1
                }
                return count
            }
        }

        /// Checks one entry's path against everything seen before and records it.
        mutating func admit(_ path: String, isFile: Bool, limit: Int) throws(ArchiveError) {
            entries += 1
            if entries > limit { throw .tooManyEntries(limit: limit) }
            let key = PathLedger.fold(path[...])
            if let earlier = folded[key] {
                if earlier.utf8.elementsEqual(path.utf8) {
                    // A folder listed twice is harmless; anything else repeated is not.
                    if isFile || files.contains(path) { throw .duplicatePath(entry: path) }
                    return
                }
                throw .collidingPath(entry: path, earlier: earlier)
            }
            // Every folder above the entry: none may be a file, and each is recorded (first spelling wins).
            var index = path.utf8.startIndex
            while let slash = path.utf8[index...].firstIndex(of: UInt8(ascii: "/")) {
                let prefix = path[..<slash]
                index = path.utf8.index(after: slash)
                if !files.isEmpty, files.contains(String(prefix)) { throw .underFile(entry: path, file: String(prefix)) }
                let foldedPrefix = PathLedger.fold(prefix)
                if folded[foldedPrefix] == nil { folded[foldedPrefix] = String(prefix) }
            }
            folded[key] = path
            if isFile { files.insert(path) }
        }
    }

    /// Checks an entry name and returns it without a trailing slash. Works on the name's bytes:
    /// every rule is about ASCII characters (`/`, `.`, NUL, `\\`).
    package static func cleanPath(_ entry: ArchiveEntry) throws(ArchiveError) -> String {
        guard let name = entry.name else { throw .invalidName(entry: entry.printableName) }
        let bytes = entry.nameBytes
        let slash = UInt8(ascii: "/"), dot = UInt8(ascii: ".")
        var start = 0, end = bytes.count
        if end >= 2 && bytes[0] == dot && bytes[1] == slash { start = 2 }
        while end > start && bytes[end - 1] == slash { end -= 1 }
        if bytes.first == slash { throw .unsafePath(entry: name, reason: "absolute paths are not allowed") }
        if end == start { throw .unsafePath(entry: name, reason: "empty path") }
        for byte in bytes[start..<end] where byte == 0 || byte == UInt8(ascii: "\\") {
            throw .unsafePath(entry: name, reason: "NUL or backslash in path")
        }
        var componentStart = start
        for i in start...end where i == end || bytes[i] == slash {
            let length = i - componentStart
            if length == 2 && bytes[componentStart] == dot && bytes[componentStart + 1] == dot {
                throw .unsafePath(entry: name, reason: "'..' climbs out of the destination")
            }
            if length == 0 || (length == 1 && bytes[componentStart] == dot) {
                throw .unsafePath(entry: name, reason: "empty or '.' path component")
            }
            componentStart = i + 1
        }
        if end - start > 1024 { throw .unsafePath(entry: name, reason: "path longer than 1024 bytes") }
        if start == 0 && end == bytes.count { return name }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    /// Lists and hashes every regular file of the archive without writing anything, applying the same rules.
    package func list(archive: String, visit: (ArchiveEntry, String) -> Void = { _, _ in }) throws(ArchiveError) -> [ExtractedFile] {
        try run(archive: archive, destination: nil, visit: visit)
    }

    /// Extracts `archive` into the existing folder `destination`, returning its regular files sorted by path.
    /// With `expectedDigest` (hex), the archive file itself must hash to it, else everything is rolled back
    /// and `.digestMismatch` thrown: a cached bundle is re-checked on every use at the cost of one hash pass.
    /// `folders` shares the folders known to exist between extractions into one staging tree (see `FolderCache`).
    package func extract(archive: String, into destination: String, expectedDigest: String? = nil,
                         folders: FolderCache? = nil) throws(ArchiveError) -> [ExtractedFile] {
        try run(archive: archive, destination: destination, expectedDigest: expectedDigest, folders: folders, visit: { _, _ in })
    }

    private func run(archive: String, destination: String?, expectedDigest: String? = nil, folders shared: FolderCache? = nil,
                     visit: (ArchiveEntry, String) -> Void) throws(ArchiveError) -> [ExtractedFile] {
        let reader: ArchiveReader
        do {
            reader = try ArchiveReader(path: archive, windowLogMax: limits.windowLogMax, hashing: expectedDigest != nil)
        } catch {
            // Opening decodes the first block already, so damage can surface here too.
            if let expectedDigest, let actual = try? SHA256.hexOfFile(archive).hex, actual != expectedDigest {
                throw .digestMismatch(expected: expectedDigest, actual: actual)
            }
            throw error
        }
        var ledger = PathLedger()
        var created: [String] = []
        var results: [ExtractedFile] = []
        var total: Int64 = 0
        var knownFolders = Set<String>()
        // Bundles are mostly small: a 128 KiB buffer costs no more calls than 1 MiB and stays in the heap.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 128 << 10, alignment: 16)
        defer { buffer.deallocate() }
        do throws(ArchiveError) {
            while let entry = try reader.next() {
                let path = try SafeExtractor.cleanPath(entry)
                switch entry.kind {
                case .regular: break
                case .directory: break
                case .symlink: throw ArchiveError.forbiddenType(entry: path, type: "symbolic link")
                case .hardlink: throw ArchiveError.forbiddenType(entry: path, type: "hard link")
                case .other(let type): throw ArchiveError.forbiddenType(entry: path, type: type)
                }
                try ledger.admit(path, isFile: entry.kind == .regular, limit: limits.maxEntries)
                visit(entry, path)
                if entry.kind == .directory {
                    if let destination { try makeFolders(destination, path, created: &created, known: &knownFolders, shared: shared) }
                    continue
                }
                if entry.size < 0 || entry.size > limits.maxBytes - total { throw ArchiveError.tooLarge(entry: path, limit: limits.maxBytes) }
                var output: WritableFile?
                if let destination {
                    let parent = FileSystem.parent(path)
                    if !parent.isEmpty { try makeFolders(destination, parent, created: &created, known: &knownFolders, shared: shared) }
                    do { output = try WritableFile(path: destination + "/" + path, exclusive: true) } catch { throw ArchiveError.io(error) }
                    created.append(destination + "/" + path)
                }
                let hasher = SHA256()
                var size: Int64 = 0
                while true {
                    let n = try reader.readData(into: buffer)
                    if n == 0 { break }
                    size += Int64(n)
                    total += Int64(n)
                    if total > limits.maxBytes { throw ArchiveError.tooLarge(entry: path, limit: limits.maxBytes) }
                    let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
                    hasher.update(chunk)
                    do { try output?.write(chunk) } catch { throw ArchiveError.io(error) }
                }
                do { try output?.close(sync: durable) } catch { throw ArchiveError.io(error) }
                results.append(ExtractedFile(path: path, size: size, sha256: hasher.finalizeHex()))
            }
            if let expectedDigest, let actual = try reader.compressedDigest(), actual != expectedDigest {
                throw ArchiveError.digestMismatch(expected: expectedDigest, actual: actual)
            }
            if durable, let destination { try syncFolders(destination, created: created) }
        } catch {
            for path in created.reversed() { try? FileSystem.removeTree(path) }
            // Damage anywhere in the file can break the stream before its end: say so rather than blame the archive.
            if let expectedDigest, !error.isDigestMismatch, let actual = try? reader.compressedDigest(), actual != expectedDigest {
                throw ArchiveError.digestMismatch(expected: expectedDigest, actual: actual)
            }
            throw error
        }
        return results.sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
    }

    /// Creates each missing folder along `relative` under `root`, recording the ones it made.
    private func makeFolders(_ root: String, _ relative: String, created: inout [String], known: inout Set<String>,
                             shared: FolderCache?) throws(ArchiveError) {
        // Folders this extraction (or, with `shared`, another one into the same tree) already made or
        // checked need no syscall again.
        if known.contains(relative) { return }
        if let shared, shared.contains(root + "/" + relative) { known.insert(relative); return }
        var current = root
        var prefix = ""
        for component in relative.split(separator: "/") {
            current += "/" + component
            prefix += prefix.isEmpty ? String(component) : "/" + component
            if known.contains(prefix) { continue }
            defer { known.insert(prefix); shared?.insert(current) }
            if let shared, shared.contains(current) { continue }
            if mkdir(current, 0o755) == 0 {
                created.append(current)
            } else if errno == EEXIST {
                // Only a real folder may already be there: never follow a link planted by someone else.
                guard FileSystem.isDirectory(current) else { throw .underFile(entry: relative, file: String(current.dropFirst(root.count + 1))) }
            } else {
                throw .io(FileError("mkdir", current))
            }
        }
    }

    private func syncFolders(_ root: String, created: [String]) throws(ArchiveError) {
        var folders = Set([root])
        for path in created { folders.insert(FileSystem.parent(path)) }
        do { for folder in folders.sorted() where FileSystem.isDirectory(folder) { try FileSystem.syncDirectory(folder) } } catch { throw .io(error) }
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
