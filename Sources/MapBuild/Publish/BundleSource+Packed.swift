import Foundation
import MapFormat
import MapIO

extension BundleSource {
    /// The source digest of what the packed bundle at `path` holds: its tar entries read in order and
    /// hashed as `read(name:folder:)` hashes a folder (the packer writes the folder's walk in that
    /// order), so a bundle packed from this source gives this source's `digest`. Nil when the archive
    /// holds anything a packer does not write. What lets `publish --previous` prove a reuse instead of
    /// trusting `publish-record.json`'s mapping (issue 41: an edited record put another region's
    /// genuine bundle under a border's source).
    static func digest(ofPackedBundle path: String) throws(ArchiveError) -> SHA256Digest? {
        let reader = try ArchiveReader(path: path)
        let hasher = SHA256()
        hasher.update(Data("mappack-bundle-source/1\n".utf8))
        while let entry = try reader.next() {
            guard var name = entry.name else { return nil }
            if name.hasPrefix("./") { name.removeFirst(2) }
            while name.hasSuffix("/") { name.removeLast() }
            switch entry.kind {
            case .directory:
                hasher.update(Data("d \(name.utf8.count):\(name)\n".utf8))
            case .regular:
                hasher.update(Data("f \(entry.size) \(name.utf8.count):\(name)\n".utf8))
                guard try reader.hashRest(with: hasher) == entry.size else { return nil }
            default:
                return nil
            }
        }
        return hasher.finalize()
    }
}
