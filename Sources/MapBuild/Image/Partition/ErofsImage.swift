import Foundation
import MapFormat
import MapIO

/// A device partition image: the image folder as an EROFS filesystem (`mkfs.erofs`, Debian's
/// erofs-utils) with a dm-verity hash tree appended (`veritysetup format`, cryptsetup-bin), and
/// the sidecar that names the tree's root hash (`VeritySidecar`).
///
/// Two builds of one image give the same bytes: every file time is the build time (`-T`), the
/// UUID is derived from the image id (`-U`), every file is root's (`--all-root`), no extended
/// attribute of the build machine is kept (`-x-1`), mkfs.erofs writes each folder's entries sorted
/// by name, and the verity salt is the SHA-256 of the filesystem's bytes. File modes are the image
/// folder's, so builds agree under one umask.
package enum ErofsImage {
    /// EROFS's block size, also dm-verity's data and hash block size.
    static let blockSize = 4096

    /// Writes the partition image of `folder` to `file` (the hash tree appended) and returns its
    /// sidecar. `built` is the manifest's build time; `imageID` its id.
    static func make(
        from folder: String, to file: String, built: String, imageID: String, mapVersion: MapVersion
    ) throws -> VeritySidecar {
        let epoch = Int64(UTCTime.parseISO8601(built)?.timeIntervalSince1970 ?? 0)
        do {
            try ExternalTool.mkfsErofs.run([
                "--quiet", "-T\(epoch)", "-U\(uuid(imageID: imageID))", "--all-root", "-x-1", file, folder,
            ])
        } catch { throw diskFull(error, writing: file, needed: 64 << 10) }
        let (digest, size) = try SHA256.digestOfFile(file)
        guard size > 0, size % Int64(blockSize) == 0 else {
            throw BuildError.output("\(file): mkfs.erofs wrote \(size) bytes, not a whole number of \(blockSize)-byte blocks")
        }
        let rootHashFile = file + ".root-hash"
        defer { try? FileSystem.removeFile(rootHashFile) }
        let verity = VeritySidecar.Verity(
            hashType: 1, hashAlgorithm: "sha256", dataBlockSize: blockSize, hashBlockSize: blockSize,
            dataBlocks: size / Int64(blockSize), hashOffset: size, salt: digest.hex, rootHash: "", superblock: false)
        let draft = VeritySidecar(
            format: VeritySidecar.formatTag, image: FileSystem.lastComponent(file), filesystem: "erofs", imageID: imageID,
            mapVersion: mapVersion.description, fileSize: 0, verity: verity)
        // The hash tree takes about 1/127 of the data (32-byte hashes in 4 KiB blocks), its upper
        // levels a few blocks more.
        do {
            try ExternalTool.veritysetup.run(["format", file, file, "--root-hash-file=\(rootHashFile)"] + draft.veritysetupOptions)
        } catch { throw diskFull(error, writing: file, needed: size / 64 + (64 << 10)) }
        let rootHash = String(decoding: try ReadableFile.contents(of: rootHashFile, limit: 1024), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard rootHash.count == 64, Hex.decode(rootHash) != nil else {
            throw BuildError.output("\(file): veritysetup format wrote no root hash (read '\(rootHash)')")
        }
        guard let total = try FileSystem.status(file)?.size else { throw BuildError.output("\(file): gone after veritysetup format") }
        return VeritySidecar(
            format: draft.format, image: draft.image, filesystem: draft.filesystem, imageID: imageID, mapVersion: draft.mapVersion,
            fileSize: total,
            verity: VeritySidecar.Verity(
                hashType: verity.hashType, hashAlgorithm: verity.hashAlgorithm, dataBlockSize: verity.dataBlockSize,
                hashBlockSize: verity.hashBlockSize, dataBlocks: verity.dataBlocks, hashOffset: verity.hashOffset, salt: verity.salt,
                rootHash: rootHash, superblock: false))
    }

    /// `error`, a tool's failure writing `file`, as `BuildError.diskFull` when the disk filled under
    /// it: mkfs.erofs says "No space left on device", veritysetup only "Input/output error", so the
    /// filesystem is asked too (less than `needed` bytes free).
    private static func diskFull(_ error: ExternalToolError, writing file: String, needed: Int64) -> any Error {
        guard case .failed(_, _, _, _, let output) = error else { return error }
        let free = (try? FileSystem.freeBytes(at: FileSystem.parent(file))) ?? .max
        return output.contains("No space left on device") || free < needed ? BuildError.diskFull(path: file, bundle: nil) : error
    }

    /// The filesystem UUID of the image with id `imageID`: the first 16 bytes of a SHA-256 of the
    /// id, marked as an RFC 9562 version 8 (custom) UUID.
    static func uuid(imageID: String) -> String {
        var bytes = Array(Hex.decode(SHA256.hex(Data(("mappack erofs uuid " + imageID).utf8)))!.prefix(16))
        bytes[6] = (bytes[6] & 0x0f) | 0x80
        bytes[8] = (bytes[8] & 0x3f) | 0x80
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(hex[hex.index(hex.startIndex, offsetBy: range.lowerBound)..<hex.index(hex.startIndex, offsetBy: range.upperBound)])
        }
        return parts.joined(separator: "-")
    }
}
