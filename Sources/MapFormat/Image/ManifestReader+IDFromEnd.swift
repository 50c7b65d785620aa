import Foundation

extension ManifestReader {
    /// How much of a manifest's end `imageIDFromEnd` reads first; each further read is twice the last.
    package static let firstIDWindow: Int64 = 64 << 10

    /// The image id a manifest of `size` bytes names, found from its end without decoding it: the
    /// last `firstIDWindow` bytes first, then twice as much until the id field is in what was read
    /// (or the whole manifest is). A canonical manifest puts the regions after the id and the file
    /// list, most of its bytes, before it, so the id is near the end. `read` gives the `count`
    /// bytes at `offset` (nil when they cannot be read, which gives nil).
    ///
    /// The id is what `ImageManifest.idInCanonicalBytes` reads at the last `"imageID":"` in the
    /// manifest; nil when there is none. This projection keeps only the id: it does not check that
    /// the bytes are a manifest.
    package static func imageIDFromEnd(size: Int64, read: (_ offset: UInt64, _ count: Int) -> Data?) -> String? {
        let key = ImageManifest.Field.idFieldStart
        var window = firstIDWindow
        var searched = 0
        while true {
            let count = min(window, size)
            guard let tail = read(UInt64(size - count), Int(count)) else { return nil }
            // The last field in the tail is the manifest's last (the tail ends where the manifest
            // does); a window that cuts it finds none and reads again, wider, searching only what it
            // had not (and the key's length more, for a key the last window cut).
            let fresh = min(tail.count, tail.count - searched + key.count - 1)
            if let start = lastStart(of: key, in: tail, before: fresh) { return ImageManifest.idInCanonicalBytes(tail[start...]) }
            if count == size { return nil }
            searched = tail.count
            window *= 2
        }
    }

    /// Where the last `key` that ends by `end` starts in `data` (from its `startIndex`): the key's
    /// first byte looked for backwards, byte by byte, and the rest compared where it is.
    static func lastStart(of key: Data, in data: Data, before end: Int) -> Data.Index? {
        guard let first = key.first, end >= key.count, end <= data.count else { return nil }
        let bytes = data.bytes
        var position = end - key.count
        while position >= 0 {
            if bytes[byteAt: position] == first, RawBytes.matches(key.bytes, in: bytes, at: position) { return data.startIndex + position }
            position -= 1
        }
        return nil
    }
}
