import Foundation
import MapIO

/// Makes the folders of a copy as the manifest's entries come, in path order, relative to the
/// copy's open root (`mkdirat`): each folder once, with no list of all folders kept. Entries
/// under one folder are contiguous in bytewise path order, so once the entries leave a folder
/// they never come back to it, and remembering the last folder made (whose ancestors all exist)
/// is enough.
struct CopyFolders {
    private let root: FileDescriptor
    private let rootPath: String
    /// The last folder made (or found), relative to the root, without a trailing `/`; its
    /// ancestors exist too.
    private var made: [UInt8] = []
    /// One folder's path, NUL-terminated, for `mkdirat`.
    private var scratch: [UInt8] = []

    init(root: FileDescriptor, rootPath: String) {
        self.root = root
        self.rootPath = rootPath
    }

    /// Makes the missing folders above `path` (a store-relative file path's bytes); an existing
    /// folder is fine. A failure names the folder.
    mutating func makeParents(of path: [UInt8]) throws(FileError) {
        guard let last = path.lastIndex(of: UInt8(ascii: "/")), last > 0 else { return }
        if made.count == last, path.starts(with: made) { return }
        // The longest run of whole folders shared with the last one made: those exist.
        var shared = 0
        while shared < last, shared < made.count, path[shared] == made[shared] { shared += 1 }
        while shared > 0, !(shared == made.count || made[shared] == UInt8(ascii: "/")) || !(shared == last || path[shared] == UInt8(ascii: "/")) {
            shared -= 1
        }
        made.removeAll(keepingCapacity: true)
        made.append(contentsOf: path[..<last])
        guard shared < last else { return }
        // Each folder below the shared ones, from the top.
        for end in (shared == 0 ? 1 : shared + 1)...last where end == last || made[end] == UInt8(ascii: "/") {
            try makeFolder(length: end)
        }
    }

    /// `mkdirat` of `made`'s first `length` bytes; `EEXIST` is fine (a folder made before, or by another).
    private mutating func makeFolder(length: Int) throws(FileError) {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: made[0..<length])
        scratch.append(0)
        do throws(Errno) {
            try root.makeDirectory(nulTerminated: scratch)
        } catch {
            if error.code == EEXIST { return }
            made.removeAll()
            throw FileError(.mkdir, rootPath + "/" + String(decoding: scratch.dropLast(), as: UTF8.self), code: error.code)
        }
    }
}
