import Foundation
import MapFormat
import MapIO

/// Writes the packed form of an image: `manifest.json` first (so a reader can stream-verify),
/// then the cache seed, then `store/` in sorted order; fixed mtime from the build time.
enum ImagePacker {
    static func pack(image: String, built: String, cacheSeed: ImageCacheSeed?, signature: Data?, to path: String) throws {
        let formatter = ISO8601DateFormatter()
        let mtime = Int(formatter.date(from: built)?.timeIntervalSince1970 ?? 0)
        let writer = try ArchiveWriter(path: path, mtime: mtime, level: 3)
        let manifest = image + "/" + ImageManifest.fileName
        guard let manifestSize = try FileSystem.status(manifest)?.size else { throw FileError("stat", manifest, code: ENOENT) }
        try writer.addFile(ImageManifest.fileName, from: manifest, size: manifestSize)
        if let signature { try writer.addFile(ImageManifest.signatureFileName, data: signature) }
        if let cacheSeed {
            let seed = image + "/" + ImageManifest.cacheSeedFileName
            try writer.addFile(ImageManifest.cacheSeedFileName, from: seed, size: cacheSeed.size)
        }
        try writer.addDirectory(ImageManifest.storeFolder)
        try writer.addTree(image + "/" + ImageManifest.storeFolder, prefix: ImageManifest.storeFolder + "/")
        try writer.finish()
    }
}
