import Foundation

/// The parser of `manifest.json`: its file list handed out one entry at a time, then the
/// `ManifestHeader` (`finish`). A manifest's size grows with its file count (about 270 bytes a
/// file), and `mappack verify` needs each entry only while it checks that file.
/// `ManifestReader.read` is this parser with the entries and the bundle list kept; the members
/// around the file list are read with `ManifestReader.Members`.
///
/// Entries as mappack writes them (canonical JSON, ASCII paths) are read straight from the bytes,
/// without a `String` or a scanner; any other entry goes through `ManifestReader.readFileFields`.
/// Either way the values are the same.
///
/// Errors are `JSONFileError`s as `ManifestReader.read` throws them, except that a failure is
/// reported where the stream meets it: a syntax error later in the file does not take precedence
/// over a missing field found earlier (`read` looks for one when the stream fails). Callers that
/// must report exactly what `read` reports re-read the bytes with it when the stream fails.
// @safe: made from a buffer (an unsafe call, marked where it is made), read with the scanner's checks.
@safe package struct ManifestStream {
    /// One entry of `files`. Its buffers are valid only during the call that hands it out.
    /// `@safe` to pass around; reading `path` is unsafe (and marked) where it happens.
    @safe package struct FileEntry {
        /// The path's UTF-8 bytes.
        package let path: UnsafeRawBufferPointer
        package let size: Int64
        package let sha256: SHA256Digest
        package let bundle: BundleDigest

        package init(path: UnsafeRawBufferPointer, size: Int64, sha256: SHA256Digest, bundle: BundleDigest) {
            unsafe self.path = unsafe path
            self.size = size
            self.sha256 = sha256
            self.bundle = bundle
        }

        /// Hands `file`'s fields to `body` as an entry.
        package static func with<Result>(_ file: ImageFile, _ body: (FileEntry) -> Result) -> Result {
            var path = file.path.string
            return path.withUTF8 { path in
                unsafe body(FileEntry(path: UnsafeRawBufferPointer(path), size: file.size, sha256: file.sha256, bundle: file.bundle))
            }
        }

        /// The entry as an `ImageFile` (which allocates its path), or why a manifest may not list its path.
        package var file: Result<ImageFile, ManifestEntryRefusal> {
            unsafe ManifestEntryRefusal.check(path: String(decoding: path, as: UTF8.self)).map {
                ImageFile(path: $0, size: size, sha256: sha256, bundle: bundle)
            }
        }
    }

    typealias Failure = JSONScanner.Failure

    private let bytes: UnsafeRawBufferPointer
    private let file: String
    /// Reads the members around `files`, from `base` on.
    private var scanner: JSONScanner
    private var base = 0
    /// The manifest's top-level object.
    private var object: JSONObjectFields<ImageManifest.Field>
    private var members = ManifestReader.Members()
    /// Inside the `files` array: where the next element (or separator) is, whether it is the
    /// first, and its index.
    private var files: (position: Int, first: Bool, index: Int)?
    private var finished = false
    /// The last bundle digest read straight from the bytes, and its hex digits.
    private var lastBundle: BundleDigest?
    private var lastBundleHex: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// The fixed bytes of a canonical file entry, copied out of their statics once.
    private let entryOpening = ImageFile.Field.entryOpening, afterBundle = ImageFile.Field.afterBundle
    private let afterPath = ImageFile.Field.afterPath, afterSHA256 = ImageFile.Field.afterSHA256
    /// The decoded path of an entry read by `ManifestReader`.
    private var pathScratch: [UInt8] = []

    /// Starts reading the manifest in `bytes`, which must stay valid while the stream is used;
    /// `file` names it in errors. The bundle list is checked, not kept.
    package init(_ bytes: UnsafeRawBufferPointer, file: String) throws(JSONFileError) {
        do throws(Failure) { try unsafe self.init(parsing: bytes, file: file, keepingBundles: false) } catch {
            throw unsafe ManifestReader.fileError(error, in: JSONScanner(bytes), file: file)
        }
    }

    /// `init(_:file:)` for `ManifestReader.read`, which keeps the bundle list when `keepingBundles`
    /// and turns failures into errors itself.
    init(parsing bytes: UnsafeRawBufferPointer, file: String, keepingBundles: Bool) throws(Failure) {
        unsafe self.bytes = unsafe bytes
        scanner = unsafe JSONScanner(bytes)
        self.file = file
        members.keepsBundles = keepingBundles
        object = try JSONObjectFields(&scanner, expected: "an image manifest")
    }

    /// Offset of the next unread byte: everything before it has been read and may be let go of.
    package var offset: Int { files?.position ?? base + scanner.offset }

    /// `blockSize` once read (canonical manifests have it before `files`).
    package var blockSize: Int64? { members.blockSize }

    /// `imageID` once read (canonical manifests have it after `files`).
    package var imageID: String? { members.imageID }

    /// Hands the next entry of `files` to `body`, reading the members before it on the way;
    /// false once the whole document has been read (then call `finish()`).
    package mutating func nextFile(_ body: (FileEntry) -> Void) throws(JSONFileError) -> Bool {
        do throws(Failure) { return try advance(body) } catch { throw fileError(error) }
    }

    /// The next entry of `files` as an `ImageFile`; nil once the whole document has been read.
    /// Throws `JSONFileError`, or `ManifestEntryRefusal` for a path that is not a `StorePath`.
    package mutating func nextFile() throws -> ImageFile? {
        var entry: Result<ImageFile, ManifestEntryRefusal>?
        while entry == nil, try nextFile({ entry = $0.file }) {}
        return try entry?.get()
    }

    /// Every member but the file and bundle lists, after `nextFile` said the end; throws what a
    /// decoder would for a missing required field (`files` and `bundles` included).
    package mutating func finish() throws(JSONFileError) -> ManifestHeader {
        do throws(Failure) { return try finishMembers().header } catch { throw fileError(error) }
    }

    /// Reads the rest of the document, skipping any entries left, and gives the header and the bundle
    /// list (empty unless kept). Failures carry offsets into `bytes`.
    mutating func finishMembers() throws(Failure) -> (header: ManifestHeader, bundles: [ImageBundle]) {
        while try advance({ _ in }) {}
        return try members.parts(of: object)
    }

    private func fileError(_ failure: Failure) -> JSONFileError {
        unsafe ManifestReader.fileError(failure, in: JSONScanner(bytes), file: file)
    }

    // MARK: Members

    /// Reads up to the next file entry and hands it to `body`; false at the end of the document.
    /// Failures carry offsets into `bytes`.
    mutating func advance(_ body: (FileEntry) -> Void) throws(Failure) -> Bool {
        while !finished {
            if files != nil {
                if try nextEntry(body) { return true }
                continue
            }
            do throws(Failure) { try nextMember() } catch {
                var error = error
                error.offset += base
                throw error
            }
        }
        return false
    }

    /// Reads one member other than `files`, or opens `files`.
    private mutating func nextMember() throws(Failure) {
        // A repeated key is refused, as in `ManifestReader`.
        guard let field = try object.next(&scanner, ImageManifest.Field.table) else {
            try scanner.expectEnd()
            finished = true
            return
        }
        guard field == .files else { return try members.read(field, from: &scanner) }
        try ManifestReader.at(field) { () throws(Failure) in
            guard try scanner.peekKind() == .array else { throw scanner.mismatch(expected: "an array of files") }
            try scanner.beginArray()
        }
        members.sawFiles = true
        files = (base + scanner.offset, true, 0)
    }

    // MARK: Skipping the file list

    /// Reads the members before `files` and opens it: true when the file list is next; false when the
    /// document ended without a `files` member.
    package mutating func openFileList() throws(JSONFileError) -> Bool {
        do throws(Failure) {
            while !finished, files == nil {
                do throws(Failure) { try nextMember() } catch {
                    var error = error
                    error.offset += base
                    throw error
                }
            }
        } catch { throw fileError(error) }
        return files != nil
    }

    /// Where a manifest as mappack writes it ends its `files` list (its `]`): the first `],"format":`
    /// from `start` on (`format` is the member after `files` in key order), found with `memchr` for
    /// the `]`s, which file entries seldom hold; nil when there is none. In valid JSON no string holds
    /// that text (its `"` would end the string where no value may follow), so the first one is the
    /// list's end; one inside an entry leaves brackets open after it, which `skipFileList`'s reader
    /// of the rest then refuses.
    package func canonicalFileListEnd(from start: Int) -> Int? {
        let marker: StaticString = #"],"format":"#
        let reader = unsafe ByteReader(bytes)
        var position = start
        while let found = unsafe RawBytes.firstIndex(of: UInt8(ascii: "]"), in: bytes.bytes, from: position, to: bytes.count) {
            var end = found
            if reader.literal(marker, &end) { return found }
            position = found + 1
        }
        return nil
    }

    /// Goes on after the open `files` list, unread, as if it ended at `end` (its `]`): the members
    /// after it are read next (`finish`). What the list holds is left to a reader of the whole list.
    package mutating func skipFileList(endingAt end: Int) throws(JSONFileError) {
        guard let (start, _, _) = files, end >= start, unsafe end < bytes.count, unsafe bytes[end] == UInt8(ascii: "]") else {
            throw fileError(Failure(offset: end, reason: "the file list does not end here"))
        }
        do throws(Failure) { try leaveFiles(at: end + 1) } catch { throw fileError(error) }
    }

    // MARK: Files

    /// Reads the separator and the entry at `files.position`, or the array's end.
    private mutating func nextEntry(_ body: (FileEntry) -> Void) throws(Failure) -> Bool {
        guard let (start, first, index) = files else { return false }
        var position = start
        let reader = unsafe ByteReader(bytes)
        position = reader.skipWhitespace(from: position)
        guard unsafe position < bytes.count else {
            throw Failure(offset: position, reason: "unexpected end of input inside an array; the file is truncated")
        }
        if unsafe bytes[position] == UInt8(ascii: "]") {
            try leaveFiles(at: position + 1)
            return false
        }
        if !first {
            guard unsafe bytes[position] == UInt8(ascii: ",") else {
                throw Failure(offset: position, reason: "expected ',' or ']' in an array, found \(describeByte(at: position))")
            }
            position = reader.skipWhitespace(from: position + 1)
            if unsafe position < bytes.count, unsafe bytes[position] == UInt8(ascii: "]") {
                throw Failure(offset: position, reason: "unexpected ']' after ','")
            }
        }
        if let end = canonicalEntry(at: position, body) {
            position = end
        } else {
            position = try readEntry(at: position, index: index, body)
        }
        files = (position, false, index + 1)
        return true
    }

    /// Reads an entry as mappack writes it (`ImageFile.Field.entryOpening`), straight from the bytes:
    /// `{"bundle":"sha256:<hex>","path":"<ASCII>","sha256":"<hex>","size":<digits>}`.
    /// Hands it to `body` and returns where it ends; nil, reading nothing, for any other shape.
    private mutating func canonicalEntry(at start: Int, _ body: (FileEntry) -> Void) -> Int? {
        let reader = unsafe ByteReader(bytes)
        var position = start
        guard reader.literal(entryOpening, &position), reader.literal("sha256:", &position), unsafe position + 64 <= bytes.count,
            let bundle = unsafe bundle(hex: UnsafeRawBufferPointer(rebasing: bytes[position..<(position + 64)]))
        else { return nil }
        position += 64
        // `plainString` consumes the closing quote each piece starts with.
        guard reader.literal(afterBundle, &position), let path = unsafe reader.plainString(&position),
            reader.literal(afterPath, from: 1, &position), unsafe position + 64 <= bytes.count,
            let (w0, w1, w2, w3) = unsafe Hex.words256(bytes.bytes, at: position)
        else { return nil }
        let sha256 = SHA256Digest(words: w0, w1, w2, w3)
        position += 64
        guard reader.literal(afterSHA256, &position), let size = reader.plainInteger(&position),
            unsafe position < bytes.count, unsafe bytes[position] == UInt8(ascii: "}")
        else { return nil }
        unsafe body(FileEntry(path: path, size: size, sha256: sha256, bundle: bundle))
        return position + 1
    }

    /// The digest whose 64 hex digits are `hex`; neighbouring entries mostly share a bundle, so
    /// the last one is remembered with its digits.
    private mutating func bundle(hex: UnsafeRawBufferPointer) -> BundleDigest? {
        if let last = lastBundle, unsafe memcmp(hex.baseAddress!, &lastBundleHex, 64) == 0 { return last }
        guard let digest = unsafe BundleDigest(validatingHex: hex) else { return nil }
        unsafe withUnsafeMutableBytes(of: &lastBundleHex) { unsafe $0.copyMemory(from: hex) }
        lastBundle = digest
        return digest
    }

    /// Reads any other entry with `ManifestReader`'s reader, over the bytes from `start` on.
    private mutating func readEntry(at start: Int, index: Int, _ body: (FileEntry) -> Void) throws(Failure) -> Int {
        // A reader started mid-document would take a byte order mark for one, and count nesting
        // from zero: refuse what a reader of the whole document refuses.
        if unsafe start < bytes.count, unsafe bytes[start] == 0xEF {
            throw Failure(offset: start, reason: "unexpected byte 0xEF where a value should start")
        }
        var reader = unsafe JSONScanner(UnsafeRawBufferPointer(rebasing: bytes[start...]))
        let entry: ManifestReader.FileFields
        do throws(Failure) {
            entry = try ManifestReader.at(ImageManifest.Field.files) { () throws(Failure) in
                try ManifestReader.at(index) { () throws(Failure) in try ManifestReader.readFileFields(&reader) }
            }
        } catch {
            var error = error
            error.offset += start
            throw error
        }
        let end = start + reader.offset
        try checkNesting(start..<end, outside: 2)
        pathScratch.removeAll(keepingCapacity: true)
        pathScratch.append(contentsOf: entry.path.utf8)
        unsafe pathScratch.withUnsafeBytes { path in unsafe body(FileEntry(path: path, size: entry.size, sha256: entry.sha256, bundle: entry.bundle))
        }
        return end
    }

    /// Goes back to reading members after the `files` array, at `position`.
    private mutating func leaveFiles(at position: Int) throws(Failure) {
        files = nil
        base = position
        scanner = unsafe JSONScanner(UnsafeRawBufferPointer(rebasing: bytes[position...]))
        unsafe try checkNesting(position..<bytes.count, outside: 1)
    }

    /// A reader started at `range` counts nesting from zero, where one of the whole document
    /// would count `outside` more: refuse nesting that only the latter would reach.
    private func checkNesting(_ range: Range<Int>, outside: Int) throws(Failure) {
        var depth = 0
        var position = range.lowerBound
        while position < range.upperBound {
            switch unsafe bytes[position] {
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth + outside > JSONScanner.maxDepth {
                    throw Failure(offset: position, reason: "arrays and objects nest deeper than \(JSONScanner.maxDepth) levels")
                }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
            case UInt8(ascii: "\""):
                // Skip the string, escapes included.
                position += 1
                while position < range.upperBound, unsafe bytes[position] != UInt8(ascii: "\"") {
                    unsafe position += bytes[position] == UInt8(ascii: "\\") ? 2 : 1
                }
            default: break
            }
            position += 1
        }
    }

    private func describeByte(at position: Int) -> String {
        let byte = unsafe bytes[position]
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x" + String(byte, radix: 16, uppercase: true)
    }
}

/// The byte readers of `ManifestStream`'s canonical entries, on a value of their own: called as
/// methods of the stream from its mutating readers, each call copied the whole stream (about
/// 500 bytes) several times an entry.
@safe private struct ByteReader {
    let bytes: UnsafeRawBufferPointer

    init(_ bytes: UnsafeRawBufferPointer) { unsafe self.bytes = unsafe bytes }

    /// The first offset from `start` on that is not JSON whitespace (or the end).
    func skipWhitespace(from start: Int) -> Int {
        var position = start
        while unsafe position < bytes.count {
            switch unsafe bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return position
            }
        }
        return position
    }

    /// Consumes `text` when the bytes at `position` are exactly it.
    func literal(_ text: StaticString, _ position: inout Int) -> Bool {
        let count = text.utf8CodeUnitCount
        guard unsafe bytes.count - position >= count, unsafe memcmp(bytes.baseAddress! + position, text.utf8Start, count) == 0 else { return false }
        position += count
        return true
    }

    /// Consumes `text[skipping...]` when the bytes at `position` are exactly that.
    func literal(_ text: [UInt8], from skipping: Int = 0, _ position: inout Int) -> Bool {
        let count = text.count - skipping
        guard unsafe bytes.count - position >= count,
            unsafe text.withUnsafeBytes({ unsafe memcmp(bytes.baseAddress! + position, $0.baseAddress! + skipping, count) }) == 0
        else { return false }
        position += count
        return true
    }

    /// The content of a string that needs no decoding (printable ASCII, no escape), consuming it
    /// and its closing quote; nil for any other.
    func plainString(_ position: inout Int) -> UnsafeRawBufferPointer? {
        let start = position
        var end = start
        // Eight bytes at a time while none of them ends the string or stops it being plain.
        while unsafe bytes.count - end >= 8 {
            let word = unsafe UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: end, as: UInt64.self))
            if ByteReader.mayEndPlainString(word) { break }
            end += 8
        }
        while unsafe end < bytes.count {
            let byte = unsafe bytes[end]
            if byte == UInt8(ascii: "\"") {
                position = end + 1
                return unsafe UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            }
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
            end += 1
        }
        return nil
    }

    /// False when none of the eight bytes in `word` is a quote, a backslash, a control character or
    /// above ASCII.
    @inline(__always)
    static func mayEndPlainString(_ word: UInt64) -> Bool {
        word & RawBytes.Word.highs != 0 || RawBytes.Word.hasBelow(word, 0x20)
            || RawBytes.Word.equal(word, UInt8(ascii: "\"")) | RawBytes.Word.equal(word, UInt8(ascii: "\\")) != 0
    }

    /// A non-negative integer of at most 18 digits without a leading zero, consuming it; nil for
    /// any other number.
    func plainInteger(_ position: inout Int) -> Int64? {
        func isDigit(_ at: Int) -> Bool { unsafe at < bytes.count && bytes[at] >= UInt8(ascii: "0") && bytes[at] <= UInt8(ascii: "9") }
        var value: Int64 = 0
        var end = position
        while end - position < 18, isDigit(end) {
            value = unsafe value * 10 + Int64(bytes[end] - UInt8(ascii: "0"))
            end += 1
        }
        let digits = end - position
        guard digits > 0, !isDigit(end), unsafe !(digits > 1 && bytes[position] == UInt8(ascii: "0")) else { return nil }
        position = end
        return value
    }
}
