import Foundation
import MapFetch
import TestSupport
import Testing

/// `DocumentFetch.get` of a `file://` URL, read in one allocation: the body, a missing file, and
/// the cap, as they were when files went through `FetchClient` chunk by chunk.
@Suite struct DocumentFetchFileTests {
    @Test func readsTheWholeFileAndAnswersMissingAndTooLarge() throws {
        let folder = TemporaryFolder("document-fetch-file")
        let bytes = Data((0..<3_000_000).map { UInt8($0 % 251) })
        let path = folder.join("catalog.json")
        try bytes.write(to: URL(fileURLWithPath: path))
        let url = URL(fileURLWithPath: path)

        guard case .body(let body, let validators) = try DocumentFetch.get(url, limit: bytes.count) else {
            Issue.record("no body")
            return
        }
        #expect(body == bytes)
        #expect(validators == nil)
        guard case .missing = try DocumentFetch.get(URL(fileURLWithPath: folder.join("none.json")), limit: 10) else {
            Issue.record("a missing file is not .missing")
            return
        }
        #expect(throws: DocumentFetchError.tooLarge(url: path, limit: bytes.count - 1)) {
            try DocumentFetch.get(url, limit: bytes.count - 1)
        }
        // A folder is no document: a failure that names it.
        #expect(throws: DocumentFetchError.self) { try DocumentFetch.get(URL(fileURLWithPath: folder.path), limit: 10) }
    }
}
