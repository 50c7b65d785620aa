import Foundation

/// A hidden entry, owned by one process, in which a folder or file is written in full before one
/// rename puts it in place, so nothing half-done ever sits under the real name.
///
/// It is named `.<what>.<kind>-<pid>` (`.<kind>-<pid>` when `what` is empty) and lives in the
/// folder of the thing it becomes, so the final rename stays on one filesystem. The PID in the
/// name is how `sweepStale(in:for:)` tells a killed run's leftovers from a live run's work. The
/// kinds a later run must find (an update's `.update-next`, whose existence means "roll forward")
/// are named without one, and no sweep removes them: their owner's recovery does.
package struct StagingArea: Sendable {
    /// What a staging entry is for: the part of its name before the PID.
    package enum Kind: Sendable, Equatable {
        /// An image (or a store's install, move or repair) being built: `.staging-`.
        case staging
        /// Shard `index` of `count` of a fleet build: `.shard-I-of-N-`.
        case shard(index: Int, count: Int)
        /// An image assembled from shards: `.merge-`.
        case merge
        /// A catalog and its bundles being published: `.publish-`.
        case publish
        /// A file written, then renamed over its target: `.tmp-`.
        case temporary
        /// A replaced folder, set aside until its successor is in place: `.old-`.
        case aside
        /// Entries no longer wanted, waiting to be deleted (`Trash`): `.trash-`.
        case trash
        /// A store update's complete new tree, kept across a kill for the repair that rolls it forward:
        /// `.update-next`, without a PID.
        case updateNext
        /// What a store update set aside, removed after its commit or roll-back: `.update-old`, without a PID.
        case updateOld

        /// The kind's word in an entry name.
        package var label: String {
            switch self {
            case .staging: "staging"
            case .shard(let index, let count): "shard-\(index)-of-\(count)"
            case .merge: "merge"
            case .publish: "publish"
            case .temporary: "tmp"
            case .aside: "old"
            case .trash: "trash"
            case .updateNext: "update-next"
            case .updateOld: "update-old"
            }
        }

        /// True for the kinds a later run must find: named without a PID, never swept.
        var outlivesItsProcess: Bool { self == .updateNext || self == .updateOld }

        /// The kinds named with their process's PID, but for shards (numbered): the ones a sweep removes
        /// once that process is gone.
        static let sweptWithoutNumbers: [Kind] = [.staging, .merge, .publish, .temporary, .aside, .trash]

        /// True when `label` names a kind in use (any shard numbers): each kind's `label`, the one
        /// spelling, read back.
        static func isKnown(_ label: Substring) -> Bool {
            if sweptWithoutNumbers.contains(where: { $0.label == label }) { return true }
            let parts = label.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 4, let index = Int(parts[1]), let count = Int(parts[3]) else { return false }
            return Kind.shard(index: index, count: count).label == label
        }
    }

    /// The folder that holds the staging entry and the thing it becomes.
    package let folder: String
    /// The entry's name in `folder`.
    package let name: String
    /// The entry's path.
    package var path: String { folder + "/" + name }

    /// The staging entry of this process for `what` (one name in `folder`, or empty) of `kind`.
    /// Nothing is created.
    package init(for what: String, kind: Kind, in folder: String) {
        self.folder = folder
        let label = kind.outlivesItsProcess ? kind.label : "\(kind.label)-\(getpid())"
        self.name = what.isEmpty ? ".\(label)" : ".\(what).\(label)"
    }

    /// Creates the entry as an empty folder (with the relative `subfolders`), first removing what an
    /// earlier run of this process left under its name.
    @discardableResult
    package func makeFolder(_ subfolders: String? = nil) throws(FileError) -> StagingArea {
        // `what` is meant to be one name; joined into a longer path it would stage somewhere else.
        guard FolderEntry(oneName: name) != nil else { throw FileError(.mkdir, note: "(not one name in \(folder))", path, code: EINVAL) }
        try FileSystem.removeTree(path)
        try FileSystem.makeDirectories(subfolders.map { path + "/" + $0 } ?? path)
        return self
    }

    /// Removes the entry and everything below it; nothing when absent.
    package func discard() {
        try? FileSystem.removeTree(path)
    }

    /// Moves the entry out of the way in one rename, into this process's trash in its folder, and
    /// deletes it there for at most half a second, handing the rest to a child that outlives this
    /// process (`Trash`): an interrupted run ends at once instead of deleting a large tree file by
    /// file, and a small one leaves nothing. Nothing when absent; removed here when it cannot be moved.
    package func throwAway() {
        guard FileSystem.exists(path) else { return }
        do { try Trash.put(name, in: folder) } catch { discard() }
        Trash.empty(in: folder, within: .milliseconds(500))
    }

    /// Renames the staging entry (or `entry`, a relative path inside it) to `target`, one name in
    /// `folder`, replacing what was there; then fsyncs `folder` unless `sync` is false (the caller
    /// commits more and syncs once).
    ///
    /// Readers see the complete old or the complete new `target`, never a mix: a staged file replaces
    /// by the rename itself (which, as `rename(2)`, fails on a folder in the way); before a staged
    /// folder, whatever is at `target` is renamed aside (`.<target>.old-<pid>`) and removed after.
    /// Every rename runs relative to `folder`'s descriptor (`renameat`), so
    /// nothing outside it is ever renamed or removed, whatever the names were built from.
    package func commit(_ entry: String? = nil, as target: String, sync: Bool = true) throws(FileError) {
        guard let targetEntry = FolderEntry(oneName: target) else {
            throw FileError(.commit, note: "(not one name in \(folder))", target, code: EINVAL)
        }
        let source = try FolderEntry(entry.map { name + "/" + $0 } ?? name, inside: folder)
        let aside = StagingArea(for: target, kind: .aside, in: folder)
        // `rename` replaces a file in one step, but a folder only when the one in the way is empty.
        let setAside = try FileSystem.status(folder + "/" + source.path)?.isDirectory == true && FileSystem.exists(folder + "/" + target)
        if setAside {
            aside.discard()
            try FileSystem.rename(targetEntry, to: try FolderEntry(aside.name, inside: folder), inFolder: folder)
        }
        try FileSystem.rename(source, to: targetEntry, inFolder: folder)
        if sync { try FileSystem.syncDirectory(folder) }
        if setAside { try FileSystem.removeTree(aside.path) }
    }

    /// Moves `target`, one name in `folder`, into the entry as `entry` (a relative path inside it,
    /// whose folder exists): the reverse of `commit`, as an update sets the live tree aside. Runs
    /// relative to `folder`'s descriptor like `commit`; nothing is synced (the caller syncs `folder`).
    package func takeIn(_ target: String, as entry: String) throws(FileError) {
        guard let targetEntry = FolderEntry(oneName: target) else {
            throw FileError(.takeIn, note: "(not one name in \(folder))", target, code: EINVAL)
        }
        try FileSystem.rename(targetEntry, to: try FolderEntry(name + "/" + entry, inside: folder), inFolder: folder)
    }

    /// Removes the staging entries in `folder` (of every kind; with `what`, only those for it) whose
    /// process is gone: what runs killed outright (`kill -9`, power loss) left behind. Entries of
    /// live processes, this one included, stay; so does everything not named like a staging entry.
    /// True when it removed any.
    ///
    /// With `inBackground`, each is moved into this process's trash in one rename and deleted by a
    /// child that outlives this process (`Trash.emptyDetached`), so the caller does not wait for
    /// the files; `Trash.waitForRemovals` waits for them.
    @discardableResult
    package static func sweepStale(in folder: String, for what: String? = nil, inBackground: Bool = false) throws(FileError) -> Bool {
        guard FileSystem.isDirectory(folder) else { return false }
        var removed = false
        for entry in try DirectoryWalker.entries(of: folder) where entry.hasPrefix(".") {
            guard let dash = entry.lastIndex(of: "-"), let pid = Int32(entry[entry.index(after: dash)...]), pid > 0, pid != getpid() else { continue }
            let stem = entry[entry.index(after: entry.startIndex)..<dash]
            let label: Substring
            if let what {
                guard stem.hasPrefix(what + ".") else { continue }
                label = stem.dropFirst(what.count + 1)
            } else {
                // `.<kind>` alone, or `.<what>.<kind>`: the kind follows the last dot.
                label = stem.lastIndex(of: ".").map { stem[stem.index(after: $0)...] } ?? stem
            }
            guard Kind.isKnown(label), isGone(pid) else { continue }
            if inBackground {
                try Trash.put(entry, in: folder)
            } else {
                try FileSystem.removeTree(folder + "/" + entry)
            }
            removed = true
        }
        if inBackground { Trash.emptyDetached(in: folder) }
        return removed
    }

    /// True when process `pid` has ended: there is none, or it is a zombie (killed, and not yet
    /// reaped by its parent, as right after `kill -9` in a script).
    static func isGone(_ pid: Int32) -> Bool {
        if kill(pid, 0) != 0 { return errno == ESRCH }
        #if os(Linux) && !MAPPACK_PORTABLE
            // `/proc/PID/stat` is `PID (COMMAND) STATE …`; the command may hold spaces and parentheses.
            guard let stat = try? ReadableFile.contents(of: "/proc/\(pid)/stat", limit: 4096),
                let close = stat.lastIndex(of: UInt8(ascii: ")")), stat.index(close, offsetBy: 2) < stat.endIndex
            else { return false }
            let state = stat[stat.index(close, offsetBy: 2)]
            return state == UInt8(ascii: "Z") || state == UInt8(ascii: "X")
        #else
            return false
        #endif
    }
}
