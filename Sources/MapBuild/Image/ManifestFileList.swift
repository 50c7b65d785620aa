import Foundation
import MapFormat
import MapIO

/// The image's file list, assembled from unpacked bundles in path order and streamed into
/// `manifest.json` bundle by bundle, so writing the manifest holds one bundle's files at a time.
///
/// Bundles normally own disjoint stretches of the sorted path space (a region's folder); then the
/// list is their lists one after another, ordered by first path. When stretches interleave, or a
/// path needs escaping in JSON, every file is loaded and sorted in memory instead (same bytes).
struct ManifestFileList {
    /// Store bundles in the order their files are written.
    private let bundles: [UnpackedBundle]
    /// The whole list sorted in memory, when the bundles' lists cannot simply follow each other.
    private var merged: [ImageFile]?
    /// Files in the image.
    let count: Int

    /// Orders `bundles` by path; throws `pathInTwoBundles` when two bundles write one path.
    init(_ unordered: consuming [UnpackedBundle]) throws {
        // Ordered in place: no copy of the bundles at the build's peak.
        var ordered = unordered
        ordered.removeAll { $0.fileCount == 0 }
        ordered.sort { $0.firstPath!.utf8.lexicographicallyPrecedes($1.firstPath!.utf8) }
        var disjoint = !ordered.contains { $0.needsEscaping }
        for (a, b) in zip(ordered, ordered.dropFirst()) where disjoint {
            if a.lastPath!.utf8.elementsEqual(b.firstPath!.utf8) {
                throw BuildError.pathInTwoBundles(path: b.firstPath!, bundles: [a.digest, b.digest])
            }
            disjoint = a.lastPath!.utf8.lexicographicallyPrecedes(b.firstPath!.utf8)
        }
        bundles = ordered
        count = ordered.reduce(0) { $0 + $1.fileCount }
        if !disjoint { merged = try mergedInMemory() }
    }

    /// Every file, sorted, with duplicates across bundles rejected (the interleaved case).
    private func mergedInMemory() throws -> [ImageFile] {
        var files: [ImageFile] = []
        files.reserveCapacity(count)
        for bundle in bundles {
            files += try bundle.files().map { ImageFile(path: $0.path, size: $0.size, sha256: $0.sha256, bundle: bundle.digest) }
        }
        files.sort { $0.path.string.utf8.lexicographicallyPrecedes($1.path.string.utf8) }
        for (a, b) in zip(files, files.dropFirst()) where a.path.string.utf8.elementsEqual(b.path.string.utf8) {
            throw BuildError.pathInTwoBundles(path: a.path.string, bundles: [a.bundle, b.bundle])
        }
        return files
    }

    /// Writes `shell` (a manifest without files) with this file list to `path`, hashing the bytes
    /// as they go out; returns the image id. The bytes equal `shell`-with-files `.sealed(hash:)`.
    ///
    /// Nothing large is held: bundles and regions are encoded a few hundred at a time (the regions on
    /// a second thread meanwhile), and each bundle's file entries were encoded when it was unpacked
    /// (`UnpackedBundle.manifestEntries`); all go into the skeleton of the shell (its canonical bytes
    /// with those lists empty). The id field comes before the regions, so the file gets a
    /// placeholder there, filled in once the hash is known.
    func writeManifest(_ shell: ImageManifest, to path: String) throws -> String {
        typealias Field = ImageManifest.Field
        var skeleton = shell
        skeleton.imageID = ""
        skeleton.files = []
        skeleton.bundles = []
        skeleton.regions = []
        let bytes = try CanonicalJSON.encode(skeleton)
        let idField = ImageManifest.idField("")
        guard merged == nil,
            let bundlesAt = bytes.range(of: Field.bundles.emptyList),
            let filesAt = bytes.range(of: Field.files.emptyList),
            let idAt = bytes.range(of: idField),
            let regionsAt = bytes.range(of: Field.regions.emptyList, options: .backwards),
            bundlesAt.upperBound <= filesAt.lowerBound, filesAt.upperBound <= idAt.lowerBound,
            idAt.upperBound <= regionsAt.lowerBound
        else {
            var manifest = shell
            manifest.files = try merged ?? mergedInMemory()
            let (id, bytes) = try manifest.sealed(hash: SHA256.hex)
            try FileSystem.writeAtomically(bytes, to: path)
            return id
        }
        let out = try ManifestStream(path: path)
        out.emit(bytes[..<bundlesAt.lowerBound])
        out.emit(Field.bundles.listStart)
        try ManifestFileList.encodeElements(shell.bundles) {
            out.emit($0)
            try out.flushIfFull()
        }
        out.emit(Data("]".utf8))
        out.emit(bytes[bundlesAt.upperBound..<filesAt.lowerBound])
        out.emit(Field.files.listStart)
        var first = true
        for bundle in bundles {
            if let entries = try bundle.manifestEntries() {
                // Encoded while the bundle was unpacked.
                if !first { out.emit(Data(",".utf8)) }
                out.emit(entries)
            } else {
                var chunk = Data()
                let bundleText = bundle.digest.description
                for (index, entry) in try bundle.files().enumerated() {
                    ImageManifest.appendFileEntry(
                        path: entry.path.string, size: entry.size, sha256: entry.sha256, bundleText: bundleText,
                        first: first && index == 0, to: &chunk)
                }
                out.emit(chunk)
            }
            first = false
            try out.flushIfFull()
        }
        out.emit(Data("]".utf8))
        out.emit(bytes[filesAt.upperBound..<idAt.lowerBound])
        try out.emitIDPlaceholder()
        out.emit(bytes[idAt.upperBound..<regionsAt.lowerBound])
        out.emit(Field.regions.listStart)
        // Streamed like the bundles: encoded whole (names in every language) on another thread, they
        // were 1.5 MiB held at a cold build's peak, for 2 254 regions.
        try ManifestFileList.encodeElements(shell.regions) {
            out.emit($0)
            try out.flushIfFull()
        }
        out.emit(Data("]".utf8))
        out.emit(bytes[regionsAt.upperBound...])
        return try out.finish()
    }
}

extension ManifestFileList {
    /// `items` as JSONEncoder writes an array of them, without the brackets, handed to `emit` in
    /// pieces: one encoder call per 256 items gives the same bytes as encoding each and joining them
    /// with commas, at a fraction of the cost, and bounds the encoder's intermediate tree.
    static func encodeElements<T: Encodable>(_ items: [T], emit: (Data) throws -> Void) throws {
        var start = 0
        while start < items.count {
            let end = min(items.count, start + 256)
            let array = try CanonicalJSON.encode(Array(items[start..<end]))
            guard array.count >= 2, array.first == UInt8(ascii: "["), array.last == UInt8(ascii: "]") else {
                throw BuildError.output("the manifest's list did not encode as a JSON array")
            }
            if start > 0 { try emit(Data(",".utf8)) }
            try emit(array.dropFirst().dropLast())
            start = end
        }
    }
}

/// `manifest.json` being written: the bytes that are hashed (id empty) and the bytes that are
/// written (a placeholder where the id goes, filled in by `finish`) differ only in the id field.
private final class ManifestStream {
    private let file: WritableFile
    private let hasher = SHA256()
    private var pending = Data()
    private var written: Int64 = 0
    private var idOffset: Int64?

    init(path: String) throws {
        file = try WritableFile(path: path)
        pending.reserveCapacity(1 << 20)
    }

    func emit(_ bytes: Data) {
        hasher.update(bytes)
        pending.append(bytes)
    }

    func emit(_ bytes: [UInt8]) {
        // Hashed from `pending`, whose bytes are a safe `RawSpan` (an array's `span.bytes` is not).
        let start = pending.count
        pending.append(contentsOf: bytes)
        hasher.update(pending.bytes.extracting(start...))
    }

    func flushIfFull() throws { if pending.count >= 1 << 20 { try flush() } }

    private func flush() throws {
        try file.write(pending)
        written += Int64(pending.count)
        pending.removeAll(keepingCapacity: true)
    }

    /// Hashes `"imageID":""` and writes `"imageID":"` + 64 placeholder bytes + `"`.
    func emitIDPlaceholder() throws {
        hasher.update(ImageManifest.idField(""))
        let start = ImageManifest.Field.idFieldStart
        idOffset = written + Int64(pending.count + start.count)
        pending.append(start)
        pending.append(Data(repeating: UInt8(ascii: "0"), count: 64))
        pending.append(UInt8(ascii: "\""))
    }

    /// Writes what is pending, puts the id in place and closes the file; returns the id.
    func finish() throws -> String {
        try flush()
        let id = hasher.finalizeHex()
        guard let idOffset, id.utf8.count == 64 else { throw FileError(.write, note: "(image id)", file.path, code: EIO) }
        try file.write(Data(id.utf8), at: idOffset)
        // No fsync: the image becomes visible only by the rename of its staging folder.
        try file.close(sync: false)
        return id
    }
}
