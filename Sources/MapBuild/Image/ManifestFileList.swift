import Foundation
import MapFormat
import MapIO

/// The image's file list, assembled from unpacked bundles in path order and streamed into
/// `manifest.json` bundle by bundle, so writing the manifest holds one bundle's files at a time.
///
/// Bundles normally own disjoint stretches of the sorted path space (a region's folder); then the
/// list is their lists one after another, ordered by first path. When stretches interleave, or a
/// path needs escaping in JSON, every file is loaded and sorted in memory instead (same bytes).
struct ManifestFileList {
    /// Store bundles in the order their files are written.
    private let bundles: [UnpackedBundle]
    /// False when the lists must be merged in memory.
    private let streamable: Bool
    /// Files in the image.
    let count: Int

    /// Orders `bundles` by path; throws `pathInTwoBundles` when two bundles write one path.
    init(_ unordered: [UnpackedBundle]) throws {
        let withFiles = unordered.filter { $0.fileCount > 0 }
        let ordered = withFiles.sorted { $0.firstPath!.utf8.lexicographicallyPrecedes($1.firstPath!.utf8) }
        var disjoint = !ordered.contains { $0.needsEscaping }
        for (a, b) in zip(ordered, ordered.dropFirst()) where disjoint {
            if a.lastPath!.utf8.elementsEqual(b.firstPath!.utf8) {
                throw BuildError.pathInTwoBundles(path: b.firstPath!, bundles: [a.digest, b.digest])
            }
            disjoint = a.lastPath!.utf8.lexicographicallyPrecedes(b.firstPath!.utf8)
        }
        bundles = ordered
        streamable = disjoint
        count = ordered.reduce(0) { $0 + $1.fileCount }
        if !streamable { _ = try mergedInMemory() }
    }

    /// Every file, sorted, with duplicates across bundles rejected (the interleaved case).
    private func mergedInMemory() throws -> [ImageFile] {
        var files: [ImageFile] = []
        files.reserveCapacity(count)
        for bundle in bundles {
            files += try bundle.files().map { ImageFile(path: $0.path, size: $0.size, sha256: $0.sha256, bundle: bundle.digest) }
        }
        files.sort { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
        for (a, b) in zip(files, files.dropFirst()) where a.path.utf8.elementsEqual(b.path.utf8) {
            throw BuildError.pathInTwoBundles(path: a.path, bundles: [a.bundle, b.bundle])
        }
        return files
    }

    /// Writes `shell` (a manifest without files) with this file list to `path`, hashing the bytes
    /// as they go out; returns the image id. The bytes equal `shell`-with-files `.sealed(hash:)`.
    func writeManifest(_ shell: ImageManifest, to path: String) throws -> String {
        guard streamable, let parts = try shell.shellAroundFiles() else {
            var manifest = shell
            manifest.files = try mergedInMemory()
            let (id, bytes) = try manifest.sealed(hash: SHA256.hex)
            try FileSystem.writeAtomically(bytes, to: path)
            return id
        }
        let file = try WritableFile(path: path)
        let hasher = SHA256()
        var pending = Data()
        pending.reserveCapacity(1 << 20)
        func flush() throws {
            hasher.update(pending)
            try file.write(pending)
            pending.removeAll(keepingCapacity: true)
        }
        pending.append(parts.before)
        var first = true
        for bundle in bundles {
            for entry in try bundle.files() {
                ImageManifest.appendFileEntry(path: entry.path, size: entry.size, sha256: entry.sha256, bundle: bundle.digest, first: first, to: &pending)
                first = false
            }
            if pending.count >= 1 << 20 { try flush() }
        }
        try flush()
        hasher.update(parts.after)
        let id = hasher.finalizeHex()
        try file.write(ImageManifest.settingID(id, in: parts.after))
        // No fsync: the image becomes visible only by the rename of its staging folder.
        try file.close(sync: false)
        return id
    }
}
