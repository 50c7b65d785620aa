import Foundation
import MapFormat
import MapIO

extension DownloadCache {
    /// For each of `digests` (sorted ascending), whether the cache holds it: the answer `contains`
    /// gives for each, from a listing of the cache's folders instead of an `lstat` per digest (a
    /// planet plan asks for 16,000 bundles; the stats were a fifth of its time). Nil when the
    /// folders hold more than `listingAtMost` entries, where asking digest by digest is cheaper, or
    /// when a folder cannot be listed (a folder without read permission can still be searched).
    package func held(among digests: [BundleDigest], listingAtMost limit: Int) -> [Bool]? {
        let top = root + "/sha256"
        var listing = FolderListing()
        var budget = limit
        guard let prefixes = try? listing.entries(of: top, limit: budget) else { return nil }
        budget -= prefixes.count
        var held = [Bool](repeating: false, count: digests.count)
        for prefix in prefixes where prefix.name.utf8.count == 2 && Hex.isDigits(prefix.name.utf8, count: 2) {
            let entries: [FolderListing.Entry]
            do throws(FileError) {
                guard let listed = try listing.entries(of: top + "/" + prefix.name, limit: budget) else { return nil }
                entries = listed
            } catch {
                // Not a folder: nothing below it, as `lstat` of a path through it finds nothing.
                if error.code == ENOENT || error.code == ENOTDIR { continue }
                return nil
            }
            budget -= entries.count
            for entry in entries where entry.isRegular && entry.name.utf8.count == 64 && entry.name.hasPrefix(prefix.name) {
                guard let digest = BundleDigest(validatingHex: entry.name.utf8), let position = Self.position(of: digest, in: digests) else {
                    continue
                }
                held[position] = true
            }
        }
        return held
    }

    /// The position of `digest` in the ascending `digests`, if present.
    private static func position(of digest: BundleDigest, in digests: [BundleDigest]) -> Int? {
        var low = 0
        var high = digests.count
        while low < high {
            let middle = (low + high) / 2
            if digests[middle] < digest { low = middle + 1 } else { high = middle }
        }
        return low < digests.count && digests[low] == digest ? low : nil
    }
}
