import Foundation
import MapFormat
import MapIO
import MapVerify

/// `NAME-VERSION.erofs.verity.json`: what a device needs to open a partition image under
/// dm-verity (`veritysetup open`, or the kernel's `dm-verity` table), and which image it holds.
/// The hash tree follows the filesystem in the same file (`hashOffset`), without a verity
/// superblock: every parameter is here, and this file is signed (`.minisig` beside it).
package struct VeritySidecar: Codable, Sendable, Equatable {
    /// `mappack-erofs-verity/1`.
    static let formatTag = "mappack-erofs-verity/1"
    /// Appended to the `.erofs` file's name.
    static let fileSuffix = ".verity.json"

    /// The format tag.
    package let format: String
    /// The partition image's file name (`NAME-VERSION.erofs`).
    package let image: String
    /// The filesystem inside, `erofs`.
    package let filesystem: String
    /// The image id of the manifest inside (`manifest.json`'s `imageID`).
    package let imageID: String
    /// The map version of the image inside.
    package let mapVersion: String
    /// The whole file's size: the filesystem, then the hash tree.
    package let fileSize: Int64
    /// The dm-verity parameters.
    package let verity: Verity

    /// dm-verity's parameters, as `veritysetup` and the kernel's table take them.
    package struct Verity: Codable, Sendable, Equatable {
        /// The on-disk hash format (`--format`; 1, the kernel's current one).
        package let hashType: Int
        /// `sha256`.
        package let hashAlgorithm: String
        package let dataBlockSize: Int
        package let hashBlockSize: Int
        /// Blocks of the filesystem covered: `hashOffset / dataBlockSize`.
        package let dataBlocks: Int64
        /// Where the hash tree starts in the file, in bytes (the filesystem's size).
        package let hashOffset: Int64
        /// Hex; the SHA-256 of the filesystem's bytes, so two builds of one image agree.
        package let salt: String
        /// Hex; the hash every block is checked up to.
        package let rootHash: String
        /// Whether a verity superblock precedes the tree (never: the parameters are all here).
        package let superblock: Bool
    }

    /// The sidecar's path for the partition image at `image`.
    package static func path(of image: String) -> String { image + fileSuffix }

    /// The sidecar's canonical bytes (sorted keys), the bytes that are signed.
    func encoded() throws -> Data { try CanonicalJSON.encode(self) }

    /// Reads and checks the sidecar at `path`.
    static func read(_ path: String) throws -> VeritySidecar {
        // Bad input (exit 2, naming it) like a sidecar that does not parse: a link is not followed (it
        // could point anywhere), a file over 64 KiB is not read.
        let data: Data
        do { data = try ReadableFile.contents(of: path, limit: 64 << 10, followLinks: false) } catch {
            switch error.code {
            case ELOOP:
                throw ImageOpenError.manifest(path: path, reason: "the sidecar is a symbolic link; keep the file the build wrote beside the image")
            case EFBIG:
                throw ImageOpenError.manifest(path: path, reason: "larger than 64 KiB: not a sidecar mappack wrote; rebuild the image")
            default: throw error
            }
        }
        let sidecar = try CanonicalJSON.decode(VeritySidecar.self, from: data, file: path)
        guard sidecar.format == formatTag else {
            throw JSONFileError(file: path, codingPath: "format", reason: "format is '\(sidecar.format)'; this mappack reads \(formatTag)")
        }
        return sidecar
    }

    /// `veritysetup` options for these parameters, after `verify FILE FILE ROOTHASH` or
    /// `open FILE NAME FILE ROOTHASH`.
    var veritysetupOptions: [String] {
        [
            "--no-superblock", "--format=\(verity.hashType)", "--hash=\(verity.hashAlgorithm)",
            "--data-block-size=\(verity.dataBlockSize)", "--hash-block-size=\(verity.hashBlockSize)",
            "--data-blocks=\(verity.dataBlocks)", "--hash-offset=\(verity.hashOffset)", "--salt=\(verity.salt)",
        ]
    }
}
