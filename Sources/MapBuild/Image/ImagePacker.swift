import Foundation
import MapFormat
import MapIO

/// Writes the packed form of an image: `manifest.json` first (so a reader can stream-verify),
/// then the cache seed, then `store/` in sorted order; fixed mtime from the build time.
enum ImagePacker {
    /// How often, at most, `progress` hears of the store files packed so far.
    static let progressInterval: Duration = .milliseconds(100)

    /// Packs `image` into `path`. `progress` gets the store files and their bytes packed so far (at
    /// most every `progressInterval`, and once at the end); the current task's cancellation stops
    /// the packing between two files (`CancellationError`), so a signal does not wait for the rest.
    static func pack(
        image: String, built: String, cacheSeed: ImageCacheSeed?, signature: Data?, to path: String,
        progress: (_ files: Int, _ bytes: Int64) -> Void = { _, _ in }
    ) throws {
        let mtime = Int(UTCTime.parseISO8601(built)?.timeIntervalSince1970 ?? 0)
        let writer = try ArchiveWriter(path: path, mtime: mtime, level: 3)
        // A signal stops the packing within a buffer of the file being written, not only between files.
        func add(_ name: String, from source: String, size: Int64) throws {
            do { try writer.addFile(name, from: source, size: size, stop: { Task.isCancelled }) } catch .stopped { throw CancellationError() }
        }
        let manifest = image + "/" + ImageManifest.fileName
        guard let manifestSize = try FileSystem.status(manifest)?.size else { throw FileError(.stat, manifest, code: ENOENT) }
        try writer.addFile(ImageManifest.fileName, from: manifest, size: manifestSize)
        if let signature { try writer.addFile(ImageManifest.signatureFileName, data: signature) }
        if let cacheSeed {
            try Task.checkCancellation()
            let seed = image + "/" + ImageManifest.cacheSeedFileName
            try add(ImageManifest.cacheSeedFileName, from: seed, size: cacheSeed.size)
        }
        try writer.addDirectory(ImageManifest.storeFolder)
        let store = image + "/" + ImageManifest.storeFolder
        let prefix = ImageManifest.storeFolder + "/"
        var files = 0
        var bytes: Int64 = 0
        var reported = ContinuousClock.now
        for item in try DirectoryWalker.walk(store) {
            try Task.checkCancellation()
            if item.isDirectory {
                try writer.addDirectory(prefix + item.relativePath)
            } else if item.isRegular {
                try add(prefix + item.relativePath, from: store + "/" + item.relativePath, size: item.size)
                files += 1
                bytes += item.size
                if ContinuousClock.now - reported >= progressInterval {
                    reported = ContinuousClock.now
                    progress(files, bytes)
                }
            } else {
                throw ArchiveError.forbiddenType(entry: item.relativePath, type: "special file")
            }
        }
        progress(files, bytes)
        try Task.checkCancellation()
        try writer.finish()
    }
}
