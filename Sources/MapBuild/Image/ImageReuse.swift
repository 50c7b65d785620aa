import Foundation
import MapFormat
import MapIO
import MapVerify

/// Reuses an earlier image's unpacked files for bundles a new build still needs
/// (`mappack build --from OLD_IMAGE`): each file is copied and re-hashed against the old
/// manifest, so a damaged old image is never trusted; a bundle whose files do not all match
/// is fetched and unpacked as usual instead.
struct ImageReuse: Sendable {
    let store: String
    let filesByBundle: [BundleDigest: [ImageFile]]
    /// Each old region's bundles, in the catalog's order: where a changed bundle's previous version is found.
    let bundlesByRegion: [RegionID: [BundleDigest]]

    /// Reads the old image's manifest (format and id checked).
    init(image: String) throws {
        let path = image + "/" + ImageManifest.fileName
        let data = try ReadableFile.contents(of: path, limit: ImageVerifier.maxManifestBytes)
        let (manifest, problems) = try ImageVerifier.readManifest(data, file: path)
        store = image + "/" + ImageManifest.storeFolder
        // An edited manifest cannot vouch for anything (the id covers whatever its author wrote); its
        // paths cannot leave the old store or the new one, as `readManifest` refuses one that could.
        filesByBundle = problems.contains { $0.kind == .imageIDMismatch } ? [:] : Dictionary(grouping: manifest.files, by: \.bundle)
        bundlesByRegion = Dictionary(manifest.regions.map { ($0.id, $0.bundles) }, uniquingKeysWith: { first, _ in first })
    }

    /// True when the old image holds `digest`'s files.
    func holds(_ digest: BundleDigest) -> Bool { filesByBundle[digest] != nil }

    /// Copies `digest`'s files into `destination`, hashing each; nil (and nothing left behind)
    /// when any file is missing or differs.
    func copy(_ digest: BundleDigest, into destination: String) -> [ExtractedFile]? {
        guard let files = filesByBundle[digest] else { return nil }
        var written: [String] = []
        var out: [ExtractedFile] = []
        for file in files {
            let target = destination + "/" + file.path.string
            do {
                try FileSystem.makeDirectories(FileSystem.parent(target))
                if FileSystem.exists(target) { throw FileError(.reuse, note: "(already written by another bundle)", target, code: EEXIST) }
                written.append(target)
                let (digest, size) = try SHA256.copyFile(store + "/" + file.path.string, to: target)
                guard digest == file.sha256, size == file.size else {
                    throw FileError(.reuse, note: "(content differs)", file.path.string, code: EIO)
                }
                out.append(ExtractedFile(path: file.path, size: size, sha256: digest))
            } catch {
                for path in written { try? FileSystem.removeFile(path) }
                return nil
            }
        }
        return out.sorted { $0.path.string.utf8.lexicographicallyPrecedes($1.path.string.utf8) }
    }
}
