import Foundation
import MapFormat
import MapIO

/// Compares a packed image's `store/` entries, as they stream out of the archive, with the
/// manifest's file entries, read alongside from the manifest's bytes. mappack packs the store in
/// path order, so the two usually meet in step and nothing is kept; entries that come out of
/// order (a tar made by other tools) wait in two tables until their partner comes, which is as
/// much memory as the disorder, and the result is the same in any order.
struct PackedStoreCheck {
    /// A manifest entry, kept past the stream's call.
    private struct Expected {
        var index: Int
        var size: Int64
        var sha256: SHA256Digest
        var bundle: BundleDigest
    }

    /// What an archive entry held.
    private struct Found {
        var size: Int64
        var digest: SHA256Digest
    }

    private let mapping: MappedFile
    private var stream: ManifestStream
    /// The stream's current entry, its path bytes, or nil past the last.
    private var current: Expected?
    private var currentPath: [UInt8] = []
    private var read = 0
    /// Manifest entries the archive has not reached in step, and archive entries ahead of the manifest.
    private var expectedLater: [String: Expected] = [:]
    private var foundEarly: [String: Found] = [:]
    /// Differences of manifest entries, with their manifest index (the old report's order).
    private var differences: [(index: Int, finding: StoreTreeCheck.Finding)] = []

    /// Reads the manifest entries from `mapping`, already checked as a whole, handing pages back
    /// as it goes.
    init(_ mapping: MappedFile, file: String) throws(JSONFileError) {
        self.mapping = mapping
        stream = try unsafe ManifestStream(mapping.bytes, file: file)
        advance()
    }

    /// Takes the archive entry at `path` (store-relative).
    mutating func found(_ path: String, size: Int64, digest: SHA256Digest) {
        let entry = Found(size: size, digest: digest)
        if let kept = expectedLater.index(forKey: path) {
            let (name, expected) = expectedLater.remove(at: kept)
            return compare(name, expected, entry)
        }
        while let expected = current {
            let order = unsafe StoreTreeCheck.compare(currentPath.span.bytes, path.utf8.span.bytes)
            if order > 0 { break }
            let name = String(decoding: currentPath, as: UTF8.self)
            advance()
            if order == 0 { return compare(name, expected, entry) }
            passed(name, expected)
        }
        foundEarly[path] = entry
    }

    /// The differences once the archive is read: missing, extra, other size or content; in the
    /// order the whole-manifest check gave them (extras by name, then manifest order).
    mutating func finish() -> [StoreTreeCheck.Finding] {
        while let expected = current {
            let name = String(decoding: currentPath, as: UTF8.self)
            advance()
            passed(name, expected)
        }
        for (name, expected) in expectedLater {
            differences.append(
                (expected.index, StoreTreeCheck.Finding(kind: .missing, path: name, bundle: expected.bundle, detail: "file is missing")))
        }
        let extras = foundEarly.keys.sorted().map {
            StoreTreeCheck.Finding(kind: .extra, path: $0, bundle: nil, detail: "file is not in the manifest")
        }
        return extras + differences.sorted { $0.index < $1.index }.map(\.finding)
    }

    /// A manifest entry the archive went past: compared with an entry that came early, or kept.
    private mutating func passed(_ name: String, _ expected: Expected) {
        if let entry = foundEarly.removeValue(forKey: name) { return compare(name, expected, entry) }
        expectedLater[name] = expected
    }

    private mutating func compare(_ path: String, _ expected: Expected, _ found: Found) {
        if found.size != expected.size {
            differences.append(
                (
                    expected.index,
                    StoreTreeCheck.Finding(
                        kind: .sizeMismatch, path: path, bundle: expected.bundle,
                        detail: "size \(found.size), manifest says \(expected.size)")
                ))
        } else if found.digest != expected.sha256 {
            differences.append(
                (
                    expected.index,
                    StoreTreeCheck.Finding(
                        kind: .digestMismatch, path: path, bundle: expected.bundle,
                        detail: "content differs (sha256 \(found.digest.hex), manifest says \(expected.sha256.hex))")
                ))
        }
    }

    private mutating func advance() {
        var next: Expected?
        var path: [UInt8] = []
        swap(&path, &currentPath)
        let index = read
        // Checked as a whole before: no failure can come now.
        _ = try? stream.nextFile { entry in
            path.removeAll(keepingCapacity: true)
            unsafe path.append(contentsOf: entry.path)
            next = Expected(index: index, size: entry.size, sha256: entry.sha256, bundle: entry.bundle)
        }
        swap(&path, &currentPath)
        if next != nil { read += 1 }
        current = next
        mapping.release(below: stream.offset)
    }
}
