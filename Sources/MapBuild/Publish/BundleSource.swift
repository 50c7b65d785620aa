import Foundation
import MapFetch
import MapFormat
import MapIO

/// One bundle folder of a source, walked and hashed: the digest of everything packing reads, so
/// equal digests mean equal `.tar.zst` bytes (and `.zck`, with `--chunked`) from the same packer.
struct BundleSource: Sendable {
    /// The bundle's name in `source.json`.
    let name: String
    /// The folder packed.
    let folder: String
    /// Regular files' paths relative to the folder, in packing order.
    let paths: [String]
    /// Sum of the regular files' sizes.
    let unpackedSize: Int64
    /// Bytes the files allocate, by the block sizes a catalog records.
    let sizeOnDisk: [String: Int64]
    /// SHA-256 over each entry's kind, path and size and each file's bytes, in packing order.
    let digest: SHA256Digest

    /// Walks and hashes `folder`; a bundle folder that cannot be packed is refused as `pack` would.
    static func read(name: String, folder: String) throws -> BundleSource {
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
            throw PublishError.badBundleFolder(bundle: name, reason: "invalid bundle name")
        }
        let entries: [DirectoryWalker.Entry]
        do { entries = try DirectoryWalker.walk(folder) } catch { throw PublishError.badBundleFolder(bundle: name, reason: error.description) }
        var paths: [String] = []
        var unpacked: Int64 = 0
        var onDisk = Dictionary(uniqueKeysWithValues: BundleInfo.publishedBlockSizes.map { ($0, Int64(0)) })
        let hasher = SHA256()
        hasher.update(Data("mappack-bundle-source/1\n".utf8))
        for entry in entries {
            // Length-prefixed paths: no path can be read as another's end.
            let path = entry.relativePath
            if entry.isDirectory {
                hasher.update(Data("d \(path.utf8.count):\(path)\n".utf8))
                continue
            }
            guard entry.isRegular else {
                throw PublishError.badBundleFolder(bundle: name, reason: "'\(path)' is not a regular file or folder")
            }
            hasher.update(Data("f \(entry.size) \(path.utf8.count):\(path)\n".utf8))
            let read: Int64
            do { read = try hasher.update(fileAt: folder + "/" + path) } catch {
                throw PublishError.badBundleFolder(bundle: name, reason: error.description)
            }
            guard read == entry.size else { throw PublishError.badBundleFolder(bundle: name, reason: "'\(path)' changed size while being read") }
            paths.append(path)
            unpacked += entry.size
            for block in BundleInfo.publishedBlockSizes { onDisk[block]! += SizeOnDisk.allocated(size: entry.size, blockSize: block) }
        }
        if paths.isEmpty { throw PublishError.badBundleFolder(bundle: name, reason: "holds no files") }
        return BundleSource(
            name: name, folder: folder, paths: paths, unpackedSize: unpacked,
            sizeOnDisk: Dictionary(uniqueKeysWithValues: onDisk.map { (String($0.key), $0.value) }), digest: hasher.finalize())
    }

    /// How this mappack packs bundles: the tar and zstd libraries and their settings, and with
    /// `chunked` the zchunk cut. A previous publish recorded with another packer reuses nothing.
    static func packer(chunked: Bool) -> String {
        var text = "tar.zst/1 level 6, \(ArchiveWriter.libraryVersion), \(Zstd.libraryVersion)"
        if chunked { text += ", zck/1 chunk \(Zchunk.Parameters.fixedPublisherChunkSize.map(String.init) ?? "per bundle")" }
        return text
    }
}
