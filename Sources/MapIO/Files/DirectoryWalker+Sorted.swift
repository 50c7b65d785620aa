import Foundation
import Synchronization

extension DirectoryWalker {
    /// An open directory's descriptor, closed when the last holder lets go: work that opens files
    /// relative to it (`openat`) can outlive the walk's visit.
    package final class OpenDirectory: Sendable {
        /// The descriptor (`O_RDONLY | O_DIRECTORY`).
        package let descriptor: FileDescriptor

        /// Folders open in this process now, walks' own and those lent to queued work.
        private static let open = Atomic<Int>(0)

        /// How many open folders a walk may count on before it stops lending the next ones: the
        /// files queued behind a lent folder keep it open, and a tree of many small folders queues
        /// files of hundreds. Past this, work opens those files by their path from the root instead,
        /// so checks stay well inside a soft limit of 1,024 open files (a common default), however
        /// many run at once.
        package static let lendingLimit = 64

        init(descriptor: FileDescriptor) {
            self.descriptor = descriptor
            OpenDirectory.open.add(1, ordering: .relaxed)
        }

        /// Whether a folder opened now may be lent (see `lendingLimit`).
        static var mayLend: Bool { open.load(ordering: .relaxed) <= lendingLimit }

        deinit {
            try? descriptor.close()
            OpenDirectory.open.subtract(1, ordering: .relaxed)
        }
    }

    /// A depth-first walk that yields every entry below a root except folders, in the bytewise
    /// order of their relative paths: the order of an image manifest's file list, so the two can
    /// be compared side by side. Memory is one listing per level of the current path, not the tree.
    ///
    /// Each folder is read whole (`getdents64`) and its names sorted with a folder's name counting as
    /// `name/`: `a/x` sorts after `a-b` (`-` < `/`), so folder `a` must come after file `a-b`.
    /// Types come from the entries, with `fstatat` only where the filesystem does not say. Folders are
    /// opened relative to their parent (`openat`), not by full path.
    package struct SortedWalk {
        /// What an entry is.
        package enum Kind: Sendable { case regular, other }

        private struct Name {
            var start: Int32
            var length: Int32
            var isDirectory: Bool
            var isRegular: Bool
        }

        /// One folder on the current path: its sorted names and how far the walk got.
        private struct Listing {
            var directory: OpenDirectory?
            /// Whether its entries carry `directory` (it was opened within `OpenDirectory.lendingLimit`).
            var lent = false
            /// The names' bytes, each followed by a NUL (for `openat`).
            var bytes: [UInt8] = []
            var names: [Name] = []
            var next = 0
            /// Length of `path` up to and including this folder's trailing `/`.
            var prefixLength = 0
        }

        private let root: String
        /// Listings from the root down; entries past `depth` are kept for their buffers.
        private var listings: [Listing] = []
        private var depth = -1
        /// Reads each folder's entries (`getdents64` on Linux).
        private var reader = DirectoryEntryReader()
        /// Folders are opened without updating their access time while the system allows it
        /// (`FileDescriptor.openForReading`): a walk that checks a tree leaves it as it was.
        private var quietly = true

        /// The current entry's path relative to the root, `/`-separated.
        package private(set) var path: [UInt8] = []
        /// The current entry's kind.
        package private(set) var kind: Kind = .other
        /// Where the current entry's name starts in `path`.
        package private(set) var nameOffset = 0
        /// The folder holding the current entry, to open it relative to that folder; nil when too many
        /// folders are open in the process already (open it by its path from the root then).
        package var directory: OpenDirectory? { listings[depth].lent ? listings[depth].directory : nil }

        /// Opens `root` (a folder); call `next()` for the first entry.
        package init(root: String) throws(FileError) {
            self.root = root
            let descriptor: FileDescriptor
            do { descriptor = try unsafe FileDescriptor.openForReading(root, options: [.directory, .followLinks], quietly: &quietly) } catch {
                throw FileError(.opendir, root, code: error.code)
            }
            try enter(OpenDirectory(descriptor: descriptor))
        }

        /// Moves to the next entry that is not a folder; false when the walk is over.
        package mutating func next() throws(FileError) -> Bool {
            while depth >= 0 {
                let index = listings[depth].next
                guard index < listings[depth].names.count else {
                    listings[depth].directory = nil
                    depth -= 1
                    continue
                }
                listings[depth].next = index + 1
                let name = listings[depth].names[index]
                let prefixLength = listings[depth].prefixLength
                path.removeSubrange(prefixLength...)
                unsafe listings[depth].bytes.withUnsafeBufferPointer { bytes in
                    unsafe path.append(contentsOf: bytes[Int(name.start)..<Int(name.start + name.length)])
                }
                if name.isDirectory {
                    let parent = listings[depth].directory!.descriptor
                    var quietly = self.quietly
                    let opened = unsafe listings[depth].bytes.withUnsafeBytes { bytes in
                        Result { () throws(Errno) in
                            try unsafe FileDescriptor.openForReading(
                                at: parent, (bytes.baseAddress! + Int(name.start)).assumingMemoryBound(to: CChar.self), options: .directory,
                                quietly: &quietly)
                        }
                    }
                    self.quietly = quietly
                    let descriptor: FileDescriptor
                    switch opened {
                    case .success(let opened): descriptor = opened
                    case .failure(let error): throw FileError(.opendir, root + "/" + String(decoding: path, as: UTF8.self), code: error.code)
                    }
                    path.append(UInt8(ascii: "/"))
                    try enter(OpenDirectory(descriptor: descriptor))
                    continue
                }
                kind = name.isRegular ? .regular : .other
                nameOffset = prefixLength
                return true
            }
            return false
        }

        /// Reads and sorts the folder open at `directory`, and makes it the current level.
        private mutating func enter(_ directory: OpenDirectory) throws(FileError) {
            depth += 1
            if depth == listings.count { listings.append(Listing()) }
            var listing = Listing()
            swap(&listing, &listings[depth])
            listing.bytes.removeAll(keepingCapacity: true)
            listing.names.removeAll(keepingCapacity: true)
            listing.next = 0
            listing.prefixLength = path.count
            listing.directory = directory
            listing.lent = OpenDirectory.mayLend
            try read(directory, into: &listing)
            swap(&listing, &listings[depth])
        }

        /// The folder whose path (ending in `/`) is `path`, for messages.
        private static func folder(_ root: String, _ path: [UInt8]) -> String {
            path.isEmpty ? root : root + "/" + String(decoding: path.dropLast(), as: UTF8.self)
        }

        private mutating func read(_ directory: OpenDirectory, into listing: inout Listing) throws(FileError) {
            let root = self.root
            let path = self.path
            let failure = unsafe reader.forEachEntry(of: directory.descriptor) { name, length, reportedType -> FileError? in
                let bytes = unsafe UnsafeRawBufferPointer(start: name, count: length)
                var type = reportedType
                if type == UInt8(DT_UNKNOWN) {
                    let info: FileSystem.Status
                    do throws(Errno) { info = try unsafe directory.descriptor.status(ofEntry: name) } catch {
                        if error.code == ENOENT || error.code == ENOTDIR { return nil }
                        return unsafe FileError(
                            .lstat, SortedWalk.folder(root, path) + "/" + String(decoding: bytes, as: UTF8.self), code: error.code)
                    }
                    type = info.isDirectory ? UInt8(DT_DIR) : info.isRegular ? UInt8(DT_REG) : UInt8(DT_LNK)
                }
                listing.names.append(
                    Name(
                        start: Int32(listing.bytes.count), length: Int32(length),
                        isDirectory: type == UInt8(DT_DIR), isRegular: type == UInt8(DT_REG)))
                unsafe listing.bytes.append(contentsOf: bytes)
                listing.bytes.append(0)
                return nil
            }
            if let failure { throw failure }
            let names = listing.bytes
            unsafe names.withUnsafeBytes { bytes in listing.names.sort { unsafe SortedWalk.precedes($0, $1, in: bytes) } }
        }

        /// Bytewise order of the names, a folder's name followed by `/`.
        private static func precedes(_ a: Name, _ b: Name, in bytes: UnsafeRawBufferPointer) -> Bool {
            let common = Int(min(a.length, b.length))
            let order = unsafe memcmp(bytes.baseAddress! + Int(a.start), bytes.baseAddress! + Int(b.start), common)
            if order != 0 { return order < 0 }
            // Past the common part: the next byte, `/` after a folder's name, nothing (-1) after a file's.
            func following(_ name: Name) -> Int {
                unsafe Int(name.length) > common ? Int(bytes[Int(name.start) + common]) : name.isDirectory ? Int(UInt8(ascii: "/")) : -1
            }
            return following(a) < following(b)
        }
    }
}
