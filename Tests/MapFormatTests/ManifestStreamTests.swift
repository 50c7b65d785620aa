import Foundation
import MapFormat
import Testing

private let hex = String(repeating: "c", count: 64)

/// A manifest with `count` files, the given keys moved or repeated by `edit`.
private func manifestText(files count: Int, edit: (String) -> String = { $0 }) -> String {
    let files = (0..<count).map { #"{"bundle":"sha256:\#(hex)","path":"f/\#($0)","sha256":"\#(hex)","size":\#($0)}"# }.joined(separator: ",")
    return edit(
        #"{"blockSize":4096,"built":"b","bundles":[{"digest":"sha256:\#(hex)","files":1,"size":1,"unpackedSize":1,"url":"u"}],"catalog":"c","#
            + #""files":[\#(files)],"format":"mappack-image/1","imageID":"id","mapVersion":"1","mappackVersion":"m","name":"n","#
            + #""regions":[{"bundles":["sha256:\#(hex)"],"id":"r","name":"R","names":{"en":"R"},"sizeOnDiskInBytes":0}]}"#)
}

/// Reads `text` through a stream: the files it hands out and the header it finishes with.
private func stream(_ text: String) throws -> (files: [ImageFile], manifest: ManifestHeader, offsets: [Int]) {
    let data = Data(text.utf8)
    return try unsafe data.withUnsafeBytes { raw in
        var stream = try unsafe ManifestStream(raw, file: "manifest.json")
        var files: [ImageFile] = []
        var offsets: [Int] = []
        while let file = try stream.nextFile() {
            files.append(file)
            offsets.append(stream.offset)
        }
        return (files, try stream.finish(), offsets)
    }
}

@Suite struct ManifestStreamTests {
    @Test(arguments: [0, 1, 500])
    func handsOutTheFilesTheWholeReaderKeeps(_ count: Int) throws {
        let text = manifestText(files: count)
        let whole = try ManifestReader.read(Data(text.utf8), file: "manifest.json")
        let streamed = try stream(text)
        #expect(streamed.files == whole.files)
        #expect(streamed.manifest == whole.header)
        // The stream moves forward one entry at a time.
        #expect(streamed.offsets == streamed.offsets.sorted() && Set(streamed.offsets).count == count)
    }

    @Test func readsEntriesInAnyShapeAsTheWholeReaderDoes() throws {
        let digest = "sha256:\(hex)"
        let entries = [
            #"{"bundle":"\#(digest)","path":"plain/1","sha256":"\#(hex)","size":0}"#,
            #" { "bundle" : "\#(digest)" , "path" : "spaced" , "sha256" : "\#(hex)" , "size" : 7 } "#,
            #"{"bundle":"\#(digest)","path":"esc\/aped\u00e9","sha256":"\#(hex)","size":1}"#,
            #"{"bundle":"\#(digest)","path":"é/地図.db","sha256":"\#(hex)","size":2}"#,
            #"{"size":3,"sha256":"\#(hex)","path":"reordered","bundle":"\#(digest)"}"#,
            #"{"bundle":"\#(digest)","extra":[{"a":[1]}],"path":"unknown key","sha256":"\#(hex)","size":4}"#,
            #"{"bundle":"\#(digest)","path":"exponent","sha256":"\#(hex)","size":1e3}"#,
            #"{"bundle":"\#(digest)","path":"18 digits","sha256":"\#(hex)","size":123456789012345678}"#,
            #"{"bundle":"\#(digest)","path":"19 digits","sha256":"\#(hex)","size":1234567890123456789}"#,
        ]
        let text = manifestText(files: 0) {
            $0.replacingOccurrences(of: #""files":[]"#, with: "\"files\":[\n" + entries.joined(separator: ",\n") + "\n]")
        }
        let whole = try ManifestReader.read(Data(text.utf8), file: "manifest.json")
        #expect(whole.files.count == entries.count)
        let streamed = try stream(text)
        #expect(streamed.files == whole.files)
        #expect(streamed.files.map(\.size) == [0, 7, 1, 2, 3, 4, 1000, 123_456_789_012_345_678, 1_234_567_890_123_456_789])
    }

    /// Canonical paths are scanned eight bytes at a time until a byte that ends the string or makes it
    /// need decoding: each such byte (a quote, an escape, a control character, UTF-8), at every offset
    /// of the first words, gives the entry the whole reader gives, or the error it gives.
    @Test(arguments: [#"\""#, #"\\"#, #"\/"#, #"\u0001"#, "é", "地", "\u{7F}", "\t"])
    func readsPathsWithAnyByteAtAnyOffsetAsTheWholeReaderDoes(_ special: String) throws {
        let digest = "sha256:\(hex)"
        let paths = (0..<20).map { offset in String(repeating: "a", count: offset) + special + String(repeating: "b", count: 19 - offset) }
        let entries = paths.enumerated().map { index, path in
            #"{"bundle":"\#(digest)","path":"\#(index)/\#(path)","sha256":"\#(hex)","size":\#(index)}"#
        }
        let text = manifestText(files: 0) { $0.replacingOccurrences(of: #""files":[]"#, with: #""files":["# + entries.joined(separator: ",") + "]") }
        let whole = Result { try ManifestReader.read(Data(text.utf8), file: "manifest.json") }
        let streamed = Result { try stream(text) }
        switch (whole, streamed) {
        case (.success(let whole), .success(let streamed)):
            #expect(streamed.files == whole.files)
            #expect(whole.files.count == paths.count)
        case (.failure, .failure): break
        default: Issue.record("whole: \(whole), streamed: \(streamed)")
        }
    }

    /// A repeated key is refused by the stream as by the whole reader, in an entry and at the top.
    @Test(arguments: [#""path":"f/1","#, #""blockSize":4096,"#])
    func refusesRepeatedKeysAsTheWholeReaderDoes(_ member: String) throws {
        let text = manifestText(files: 3) { $0.replacingOccurrences(of: member, with: member + member) }
        #expect(text != manifestText(files: 3))
        #expect(throws: JSONFileError.self) { _ = try ManifestReader.read(Data(text.utf8), file: "manifest.json") }
        let error = #expect(throws: JSONFileError.self) { _ = try stream(text) }
        #expect(error?.reason.contains("appears twice") == true, "\(String(describing: error))")
    }

    @Test(arguments: [#""size":01}"#, #""size":99999999999999999999}"#, #""size":-}"#, #""size":1,}"#, #""path":"a\q","#])
    func refusesWhatTheWholeReaderRefuses(_ replacement: String) throws {
        let text = manifestText(files: 3) { $0.replacingOccurrences(of: #""size":1}"#, with: replacement) }
        #expect(throws: JSONFileError.self) { _ = try ManifestReader.read(Data(text.utf8), file: "manifest.json") }
        #expect(throws: JSONFileError.self) { _ = try stream(text) }
    }

    /// Nesting at the scanner's limit, in a file entry and after the file list: where the stream
    /// reads from the middle of the document it must still count from its start.
    @Test(arguments: [(509, true), (510, false)], [true, false])
    func nestingLimitIsTheWholeDocumentsOne(_ nesting: (depth: Int, accepted: Bool), _ inEntry: Bool) throws {
        let depth = inEntry ? nesting.depth : nesting.depth + 2
        let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        let text = manifestText(files: 2) { text in
            inEntry
                ? text.replacingOccurrences(of: #""path":"f/1","#, with: #""deep":\#(nested),"path":"f/1","#)
                : text.replacingOccurrences(of: #""name":"n","#, with: #""name":"n","deep":\#(nested),"#)
        }
        let whole = Result { try ManifestReader.read(Data(text.utf8), file: "manifest.json") }
        let streamed = Result { try stream(text) }
        if nesting.accepted {
            #expect(try streamed.get().files == whole.get().files)
        } else {
            #expect(throws: JSONFileError.self) { try whole.get() }
            #expect(throws: JSONFileError.self) { try streamed.get() }
        }
    }

    @Test func readsMembersInAnyOrder() throws {
        let text = manifestText(files: 0) { text in
            text.replacingOccurrences(of: #"{"blockSize":4096,"#, with: #"{"#)
                .replacingOccurrences(of: #""files":["#, with: #""future":{"files":[1]},"files":["#)
                .replacingOccurrences(of: #""name":"n","#, with: #""name":"n","blockSize":512,"#)
        }
        let whole = try ManifestReader.read(Data(text.utf8), file: "manifest.json")
        let streamed = try stream(text)
        #expect(whole.files.isEmpty && streamed.files.isEmpty)
        #expect(streamed.manifest == whole.header)
        #expect(streamed.manifest.blockSize == 512)
    }

    @Test func checksBundlesItDoesNotKeep() throws {
        #expect(try stream(manifestText(files: 2)).manifest == ManifestReader.read(Data(manifestText(files: 2).utf8), file: "m").header)
        let broken = manifestText(files: 2) { $0.replacingOccurrences(of: #""url":"u""#, with: #""url":5"#) }
        #expect(throws: JSONFileError.self) { _ = try stream(broken) }
    }

    @Test(arguments: [
        (#""size":1}"#, #""size":"1"}"#, "files[1].size"),
        (#""files":["#, #""files":{"#, "files"),
        (#""name":"n""#, #""name":1"#, "name"),
        (#""path":"f/2","#, "", "files[2].path"),
        // A file's digest is 64 lower-case hex digits, in the canonical shape as in any other.
        (#""path":"f/1","sha256":"c"#, #""path":"f/1","sha256":"C"#, "files[1].sha256"),
        (#""sha256":"\#(hex)","size":2"#, #""sha256":"XYZ","size":2"#, "files[2].sha256"),
    ])
    func failsWhereItMeetsTheProblemWithItsPath(_ edit: (String, String, String)) throws {
        let text = manifestText(files: 3) { $0.replacingOccurrences(of: edit.0, with: edit.1) }
        do {
            _ = try stream(text)
            Issue.record("expected a failure")
        } catch let error as JSONFileError {
            #expect(error.codingPath == edit.2)
            #expect(error.line == 1)
        }
    }
}
