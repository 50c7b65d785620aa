import Foundation

/// Reads `manifest.json` with its file list handed out one entry at a time instead of kept:
/// a manifest's size grows with its file count (about 270 bytes a file), and `mappack verify`
/// needs each entry only while it checks that file. Everything else (regions, bundles, cache
/// seed, the scalar fields) is read as `ManifestReader` reads it, with the same code.
///
/// Errors are `JSONFileError`s as `ManifestReader.read` throws them, except that a failure is
/// reported where the stream meets it: a syntax error later in the file does not take precedence
/// over a missing field found earlier. Callers that must report exactly what `read` reports
/// re-read the bytes with it when the stream fails.
package struct ManifestStream {
    private typealias Failure = JSONScanner.Failure
    private typealias Field = ManifestReader.ManifestField

    private var scanner: JSONScanner
    private let file: String
    private let start: Int
    private var members = ManifestReader.Members()
    private var seen: UInt32 = 0
    private var firstMember = true
    /// Inside the `files` array: whether its next element is the first, and the next index.
    private var filesPosition: (first: Bool, index: Int)?
    private var finished = false

    /// Starts reading the manifest in `bytes`, which must stay valid while the stream is used;
    /// `file` names it in errors. Without `keepingBundles`, the bundle list is checked but the
    /// manifest `finish` returns has none.
    package init(_ bytes: UnsafeRawBufferPointer, file: String, keepingBundles: Bool = true) throws(JSONFileError) {
        scanner = JSONScanner(bytes)
        self.file = file
        start = scanner.offset
        members.keepsBundles = keepingBundles
        do throws(Failure) { try ManifestReader.beginManifest(&scanner) } catch { throw ManifestReader.fileError(error, in: scanner, file: file) }
    }

    /// Offset of the next unread byte: everything before it has been read and may be let go of.
    package var offset: Int { scanner.offset }

    /// `blockSize` once read (canonical manifests have it before `files`).
    package var blockSize: Int64? { members.blockSize }

    /// `imageID` once read (canonical manifests have it after `files`).
    package var imageID: String? { members.imageID }

    /// The next entry of `files`, reading the members before it on the way; nil once the whole
    /// document has been read (then call `finish()`).
    package mutating func nextFile() throws(JSONFileError) -> ImageFile? {
        do throws(Failure) { return try advance() } catch { throw ManifestReader.fileError(error, in: scanner, file: file) }
    }

    /// The manifest with an empty `files` list, after `nextFile()` returned nil; throws what a
    /// decoder would for a missing required field (`files` included).
    package mutating func finish() throws(JSONFileError) -> ImageManifest {
        do throws(Failure) {
            while try advance() != nil {}
            return try members.manifest(at: start)
        } catch {
            throw ManifestReader.fileError(error, in: scanner, file: file)
        }
    }

    private mutating func advance() throws(Failure) -> ImageFile? {
        while !finished {
            if var position = filesPosition {
                if try scanner.nextElement(first: &position.first) {
                    let index = position.index
                    position.index += 1
                    filesPosition = position
                    return try ManifestReader.at("files") { () throws(Failure) in
                        try ManifestReader.at(index) { () throws(Failure) in try ManifestReader.readFile(&scanner) }
                    }
                }
                filesPosition = nil
                continue
            }
            guard try scanner.nextMember(first: &firstMember) else {
                try scanner.expectEnd()
                finished = true
                break
            }
            // A repeated key keeps its first value, as with JSONDecoder; later ones are skipped unchecked.
            guard let field = try scanner.readKey(among: Field.keys).flatMap(Field.init(rawValue:)),
                  ManifestReader.firstSighting(field.rawValue, &seen) else { try scanner.skipValue(); continue }
            guard field == .files else { try members.read(field, from: &scanner); continue }
            try ManifestReader.at("files") { () throws(Failure) in
                guard try scanner.peekKind() == .array else { throw scanner.mismatch(expected: "an array of files") }
                try scanner.beginArray()
            }
            members.files = []
            filesPosition = (true, 0)
        }
        return nil
    }
}
