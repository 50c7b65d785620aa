import Foundation
import MapFormat
import MapIO

/// The image id of a manifest read front to back: the SHA-256 of its bytes with the id blanked,
/// as `ImageManifest.bytesForID(fromFile:imageID:)` gives them (the first `"imageID":"<id>"`
/// becomes `"imageID":""`), hashed a little behind the reader instead of from a copy.
///
/// The id is known only once read, so hashing stops where `"imageID":"` first starts and waits
/// for it. In a canonical manifest that is the id's own member, read right after: hashing goes
/// on at once, and the bytes are hashed while still in memory.
struct ManifestIDDigest {
    private enum State {
        /// No `"imageID":"` starts before `hashed`.
        case seekingKey
        /// `"imageID":"` starts at `hashed`; is it the id's field?
        case atKey
        /// The id is known and its field does not start before `hashed`.
        case seekingField
        /// The field has been blanked: the rest is plain bytes.
        case pastField
    }

    private let hasher = SHA256()
    private var state = State.seekingKey
    /// Bytes before this offset are hashed.
    private var hashed = 0
    private static let key = Array(ImageManifest.Field.idFieldStart)
    /// Where in the key `find` anchors its search: the capital `I` of `imageID`.
    private static let anchor = key.firstIndex(of: UInt8(ascii: "I")) ?? 0
    /// Hashing in steps of this much keeps searches few.
    private static let step = 256 << 10

    /// Hashes what can be hashed of `bytes` below `offset`, the reader's position; `imageID` is
    /// the id once the reader has read it. `final`: `offset` is the end.
    mutating func advance(_ bytes: RawSpan, to offset: Int, imageID: String?, final: Bool = false) {
        guard final || offset - hashed >= ManifestIDDigest.step else { return }
        while true {
            switch state {
            case .seekingKey:
                guard let start = seek(ManifestIDDigest.key, in: bytes, below: offset) else { return }
                update(bytes, to: start)
                state = .atKey
            case .atKey:
                guard let imageID else { return }
                let field = ManifestIDDigest.field(imageID)
                guard hashed + field.count <= offset else { return }
                if ManifestIDDigest.matches(field, in: bytes, at: hashed) {
                    blank(field)
                } else {
                    state = .seekingField
                    // Not the field: its first byte is plain, and the search goes on after it.
                    update(bytes, to: hashed + 1)
                }
            case .seekingField:
                let field = ManifestIDDigest.field(imageID ?? "")
                guard let start = seek(field, in: bytes, below: offset) else { return }
                update(bytes, to: start)
                blank(field)
            case .pastField:
                update(bytes, to: offset)
                return
            }
        }
    }

    /// What `concurrent` found: the id of a manifest whose first `"imageID":"` starts the field
    /// `"imageID":"<blanked>"`. It is the manifest's id exactly when `blanked` is the manifest's
    /// `imageID` (then that field is the one `advance` blanks too).
    struct Concurrent: Sendable {
        /// The value the first `"imageID":"` opened, which was blanked.
        let blanked: String
        /// The lower-case hex SHA-256 of the manifest with that value blanked.
        let id: String
    }

    /// The manifest at `path` hashed as `advance` hashes it, by itself (on a thread of its own, while
    /// another reads the entries), in steps of 1 MiB through a mapping of its own whose pages are handed
    /// back as it goes: the first `"imageID":"` is taken for the id's field, blanked up to its closing
    /// quote. Nil when there is none, when its value holds an escape or runs past 256 bytes, when the
    /// file cannot be mapped, or once `stop` says true; the reader then hashes the bytes itself.
    static func concurrent(at path: String, limit: Int, stop: () -> Bool) -> Concurrent? {
        guard let mapping = MappedFile(path: path, limit: limit) else { return nil }
        let hasher = SHA256()
        let block = 1 << 20
        let key = ManifestIDDigest.key
        var blanked: String?
        var hashed = 0
        let found: Bool = mapping.withBytes { bytes in
            let count = bytes.byteCount
            while hashed < count {
                if stop() { return false }
                var end = min(count, hashed + block)
                if blanked == nil, let start = find(key, in: bytes, from: hashed, to: min(count, end + key.count - 1)) {
                    hasher.update(bytes.extracting(hashed..<start))
                    let valueStart = start + key.count
                    var close = valueStart
                    while close < count, close - valueStart <= 256, bytes[byteAt: close] != UInt8(ascii: "\"") {
                        if bytes[byteAt: close] == UInt8(ascii: "\\") { return false }
                        close += 1
                    }
                    guard close < count, bytes[byteAt: close] == UInt8(ascii: "\"") else { return false }
                    blanked = String(decoding: (valueStart..<close).map { bytes[byteAt: $0] }, as: UTF8.self)
                    hasher.update(ImageManifest.Field.idField(""))
                    hashed = close + 1
                    end = max(end, hashed)
                }
                hasher.update(bytes.extracting(hashed..<end))
                hashed = end
                mapping.release(below: hashed)
            }
            return blanked != nil
        }
        guard found, let blanked else { return nil }
        return Concurrent(blanked: blanked, id: hasher.finalizeHex())
    }

    /// The hex id, after a final `advance`; nil when the field is not there as written (then
    /// only a re-encoding can tell).
    func finish() -> String? {
        guard case .pastField = state else { return nil }
        return hasher.finalizeHex()
    }

    private static func field(_ imageID: String) -> [UInt8] { Array(ImageManifest.Field.idField(imageID)) }

    private mutating func blank(_ field: [UInt8]) {
        hasher.update(ImageManifest.Field.idField(""))
        hashed += field.count
        state = .pastField
    }

    /// The start of the first `needle` from `hashed` that ends by `offset`; when there is none,
    /// hashes up to where one could still start and returns nil.
    private mutating func seek(_ needle: [UInt8], in bytes: RawSpan, below offset: Int) -> Int? {
        if let start = ManifestIDDigest.find(needle, in: bytes, from: hashed, to: offset) { return start }
        update(bytes, to: max(hashed, offset - (needle.count - 1)))
        return nil
    }

    private mutating func update(_ bytes: RawSpan, to end: Int) {
        hasher.update(bytes.extracting(hashed..<end))
        hashed = end
    }

    private static func matches(_ needle: [UInt8], in bytes: RawSpan, at start: Int) -> Bool {
        // Byte by byte: a needle is a few dozen bytes, and `Span.bytes` (for `RawBytes.matches`) is unsafe.
        guard start >= 0, start <= bytes.byteCount - needle.count else { return false }
        for index in needle.indices where needle[index] != bytes[byteAt: start + index] { return false }
        return true
    }

    /// Offset of the first `needle` starting in `start..<end` and ending by `end`. Both needles
    /// start with `"imageID":"`; its capital `I` is rare in manifests, so `memchr` looks for that.
    private static func find(_ needle: [UInt8], in bytes: RawSpan, from start: Int, to end: Int) -> Int? {
        let anchor = ManifestIDDigest.anchor
        var position = start + anchor
        let last = end - needle.count + anchor
        while position <= last {
            guard let found = RawBytes.firstIndex(of: needle[anchor], in: bytes, from: position, to: last + 1) else { return nil }
            let candidate = found - anchor
            if matches(needle, in: bytes, at: candidate) { return candidate }
            position = candidate + anchor + 1
        }
        return nil
    }
}
