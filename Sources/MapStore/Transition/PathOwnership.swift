import MapFormat

/// Which bundle owns each store path while a download or an update stages its new tree: a bundle may
/// add a path only where no other bundle has a file, and not below one (nor a file where another
/// bundle's files have their folder). A catalog that breaks this would make the store's manifest list
/// a path twice, a state no reader accepts (issue 40), so the transition is refused before its
/// switch, naming both owners.
struct PathOwnership {
    /// Files → the bundle that owns them.
    private var files: [String: BundleDigest] = [:]
    /// Every folder above an owned file → one bundle with a file below it.
    private var folders: [String: BundleDigest] = [:]
    /// A bundle's name in a message: the regions that use it, then the bundle.
    private let describe: (BundleDigest) -> String

    /// Ownership of the files that stay in the store (`kept`), with `describe` naming a bundle's regions.
    init(kept: [ImageFile], describe: @escaping (BundleDigest) -> String) {
        self.describe = describe
        for file in kept { record(file.path.string, by: file.bundle) }
    }

    /// The bundle that owns `path` (a file, or a folder of files).
    func owner(of path: String) -> BundleDigest? { files[path] ?? folders[path] }

    /// Records that `bundle` adds the file `path`; throws `ownershipConflict` when another bundle owns
    /// that path, a folder above it as a file, or files below it.
    mutating func claim(_ path: String, by bundle: BundleDigest) throws(MapStoreError) {
        if let other = files[path] ?? folders[path], other != bundle { throw conflict(path, other, bundle) }
        var folder = Substring(path)
        while let slash = folder.lastIndex(of: "/") {
            folder = folder[..<slash]
            if let other = files[String(folder)], other != bundle { throw conflict(String(folder), other, bundle) }
        }
        record(path, by: bundle)
    }

    /// The error for `path`, owned by `owner` and claimed by `claimant`.
    func conflict(_ path: String, _ owner: BundleDigest, _ claimant: BundleDigest) -> MapStoreError {
        .ownershipConflict(path: path, owners: [describe(owner), describe(claimant)])
    }

    private mutating func record(_ path: String, by bundle: BundleDigest) {
        files[path] = bundle
        var folder = Substring(path)
        while let slash = folder.lastIndex(of: "/") {
            folder = folder[..<slash]
            if folders[String(folder)] != nil { break }
            folders[String(folder)] = bundle
        }
    }
}
