import MapIO

/// A run of what the walk of a store found, in path order, handed from the thread that walks to
/// the one that compares with the manifest: listing folders is about half the work of reading
/// a manifest and walking the store, so it gets a thread of its own.
struct ListedEntries: ReusableBatch {
    /// One entry that is not a folder.
    struct Entry: Sendable {
        /// The folder holding it, when the walk lent it (else the entry is opened from the root).
        var directory: DirectoryWalker.OpenDirectory?
        /// The store-relative path in `paths`.
        var pathStart: Int32
        var pathLength: Int32
        /// Where the name starts, from `pathStart`.
        var nameOffset: Int32
        var isRegular: Bool
    }

    private(set) var entries: [Entry] = []
    private(set) var paths: [UInt8] = []
    /// Why the walk stopped after these entries, if it failed.
    var failure: FileError?

    /// Entries per batch (as large as `FileCheckBatch`'s, for the same reason: rare hand-overs).
    static let capacity = 256

    init() {}

    var isFull: Bool { entries.count >= ListedEntries.capacity }

    /// Adds the walk's current entry.
    mutating func add(_ walk: DirectoryWalker.SortedWalk) {
        entries.append(
            Entry(
                directory: walk.directory, pathStart: Int32(paths.count), pathLength: Int32(walk.path.count),
                nameOffset: Int32(walk.nameOffset), isRegular: walk.kind == .regular))
        paths.append(contentsOf: walk.path)
    }

    mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        paths.removeAll(keepingCapacity: true)
        failure = nil
    }

    /// The path of `entry`, as bytes.
    func withPath<Result>(_ entry: Entry, _ body: (Span<UInt8>) -> Result) -> Result {
        body(paths.span.extracting(Int(entry.pathStart)..<Int(entry.pathStart + entry.pathLength)))
    }
}
