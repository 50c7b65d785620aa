/// Decoding steps the hand-written readers (`CatalogReader`, `ManifestReader`) share: coding
/// paths for errors, `null` as absent, arrays, required fields.
protocol JSONFieldReading {}

extension JSONFieldReading {
    /// Runs `body`, adding `field`'s key to the path of an error it throws.
    /// The key is spelled only on failure.
    @inline(__always)
    static func at<T, Field: JSONField>(_ field: Field, _ body: () throws(JSONScanner.Failure) -> T) throws(JSONScanner.Failure) -> T {
        do { return try body() } catch {
            var error = error
            error.path.insert(.key(field.rawValue), at: 0)
            throw error
        }
    }

    /// Runs `body`, adding `key` to the path of an error it throws.
    static func at<T>(_ key: String, _ body: () throws(JSONScanner.Failure) -> T) throws(JSONScanner.Failure) -> T {
        do { return try body() } catch {
            var error = error
            error.path.insert(.key(key), at: 0)
            throw error
        }
    }

    /// Runs `body`, adding `index` to the path of an error it throws.
    static func at<T>(_ index: Int, _ body: () throws(JSONScanner.Failure) -> T) throws(JSONScanner.Failure) -> T {
        do { return try body() } catch {
            var error = error
            error.path.insert(.index(index), at: 0)
            throw error
        }
    }

    /// Runs `body`, adding the key `key` spells to the path of an error it throws: for keys that
    /// cost an allocation to spell (a bundle's digest), spelled only on failure.
    static func at<T>(spelling key: () -> String, _ body: () throws(JSONScanner.Failure) -> T) throws(JSONScanner.Failure) -> T {
        do { return try body() } catch {
            var error = error
            error.path.insert(.key(key()), at: 0)
            throw error
        }
    }

    /// nil for `null`, as `decodeIfPresent` does; otherwise `read`'s value.
    static func optional<T>(_ scanner: inout JSONScanner, _ read: (inout JSONScanner) throws(JSONScanner.Failure) -> T) throws(JSONScanner.Failure)
        -> T?
    {
        if try scanner.readNull() { return nil }
        return try read(&scanner)
    }

    static func readArray<Element>(
        _ scanner: inout JSONScanner, of what: String,
        _ element: (inout JSONScanner) throws(JSONScanner.Failure) -> Element
    ) throws(JSONScanner.Failure) -> [Element] {
        guard try scanner.peekKind() == .array else { throw scanner.mismatch(expected: "an array of \(what)") }
        var result: [Element] = []
        try scanner.beginArray()
        var first = true
        while try scanner.nextElement(first: &first) {
            let value = try at(result.count) { () throws(JSONScanner.Failure) in try element(&scanner) }
            result.append(value)
        }
        return result
    }

    /// `readArray` into `buffer` (emptied first, its capacity kept), for decoders that then copy
    /// the elements out at their exact count instead of growing a new array for every value.
    static func readArray<Element>(
        _ scanner: inout JSONScanner, of what: String, into buffer: inout [Element],
        _ element: (inout JSONScanner) throws(JSONScanner.Failure) -> Element
    ) throws(JSONScanner.Failure) {
        guard try scanner.peekKind() == .array else { throw scanner.mismatch(expected: "an array of \(what)") }
        buffer.removeAll(keepingCapacity: true)
        try scanner.beginArray()
        var first = true
        while try scanner.nextElement(first: &first) {
            let value = try at(buffer.count) { () throws(JSONScanner.Failure) in try element(&scanner) }
            buffer.append(value)
        }
    }

    /// A copy of `buffer` in an array of its own, allocated at exactly its count.
    static func exactCopy<Element>(_ buffer: [Element]) -> [Element] {
        var copy: [Element] = []
        copy.reserveCapacity(buffer.count)
        copy.append(contentsOf: buffer)
        return copy
    }

    static func readStrings(_ scanner: inout JSONScanner) throws(JSONScanner.Failure) -> [String] {
        try readArray(&scanner, of: "strings", readStringValue)
    }

    static func readDoubles(_ scanner: inout JSONScanner) throws(JSONScanner.Failure) -> [Double] {
        try readArray(&scanner, of: "numbers") { (scanner: inout JSONScanner) throws(JSONScanner.Failure) in try scanner.readDouble() }
    }

    /// A bundle digest: the same rule as `BundleDigest(_:)`, checked on the bytes without copies.
    static func readDigest(_ scanner: inout JSONScanner) throws(JSONScanner.Failure) -> BundleDigest {
        let start = scanner.offset
        guard try scanner.peekKind() == .string else { throw scanner.mismatch(expected: "a bundle digest string") }
        switch try scanner.readPrefixedHex256(prefix: "sha256:") {
        case .words(let w0, let w1, let w2, let w3): return BundleDigest(words: w0, w1, w2, w3)
        case .other(let text):
            throw JSONScanner.Failure(offset: start, reason: "'\(text)' is not a bundle digest (sha256:<64 lower-case hex digits>)")
        }
    }

    /// A SHA-256 digest: the same rule as `SHA256Digest(hex:)`, checked on the bytes without copies.
    static func readSHA256(_ scanner: inout JSONScanner) throws(JSONScanner.Failure) -> SHA256Digest {
        let start = scanner.offset
        guard try scanner.peekKind() == .string else { throw scanner.mismatch(expected: "a SHA-256 digest string") }
        switch try scanner.readPrefixedHex256(prefix: "") {
        case .words(let w0, let w1, let w2, let w3): return SHA256Digest(words: w0, w1, w2, w3)
        case .other(let text):
            throw JSONScanner.Failure(offset: start, reason: "'\(text)' is not a SHA-256 digest (64 lower-case hex digits)")
        }
    }

    static func readStringValue(_ scanner: inout JSONScanner) throws(JSONScanner.Failure) -> String { try scanner.readString() }
    static func readRegionID(_ scanner: inout JSONScanner) throws(JSONScanner.Failure) -> RegionID { RegionID(try scanner.readString()) }

    /// A reader's failure as the `JSONFileError` callers see: path, reason, line and column.
    static func fileError(_ failure: JSONScanner.Failure, in scanner: JSONScanner, file: String) -> JSONFileError {
        var error = JSONFileError(file: file, codingPath: render(failure.path), reason: failure.reason)
        let location = scanner.location(of: failure.offset)
        error.line = location.line
        error.column = location.column
        return error
    }

    /// `regions[3].parent`, as `JSONFileError` renders Codable paths.
    static func render(_ path: [JSONScanner.PathComponent]) -> String {
        var out = ""
        for component in path {
            switch component {
            case .index(let index): out += "[\(index)]"
            case .key(let key): out += out.isEmpty ? key : "." + key
            }
        }
        return out
    }
}

extension CatalogReader: JSONFieldReading {}
extension ManifestReader: JSONFieldReading {}

extension JSONScanner.Failure {
    /// A key that appears twice in one object.
    static func duplicateKey(_ key: String, at offset: Int) -> JSONScanner.Failure {
        JSONScanner.Failure(
            offset: offset, reason: "key \"\(key)\" appears twice in one object; remove one (readers disagree on which one counts)", path: [.key(key)]
        )
    }
}
