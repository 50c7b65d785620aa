import Foundation
import MapFetch
import MapFormat
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
        #expect(throws: DocumentFetchError.tooLarge(url: url, limit: bytes.count - 1)) {
            try DocumentFetch.get(url, limit: bytes.count - 1)
        }
        // A folder is no document: a failure that names it.
        #expect(throws: DocumentFetchError.self) { try DocumentFetch.get(URL(fileURLWithPath: folder.path), limit: 10) }
    }

    /// The fetch errors keep the `URL` and name it as people read it: a file by its path, any other
    /// URL whole (the spelling the errors held as text before).
    @Test func errorsNameAFileByItsPathAndAServerURLWhole() {
        let file = URL(fileURLWithPath: "/maps/catalog.json")
        let served = URL(string: "https://maps.example/w/catalog.json")!
        #expect(FetchFailure.stopped(url: file).description == "/maps/catalog.json: stopped")
        #expect(
            FetchFailure.status(url: served, httpStatus: 503, retryAfter: nil).description == "https://maps.example/w/catalog.json: HTTP status 503")
        #expect(DocumentFetchError.failed(url: file, httpStatus: nil, reason: "gone").description == "/maps/catalog.json: gone")
        #expect(
            CatalogFetchError.missing(url: served).description
                == "https://maps.example/w/catalog.json: no catalog there (HTTP 404, or no such file); check the URL, or publish one")
        #expect(CatalogFetchError.refused(url: file, .timestampMissing).description.hasPrefix("/maps/catalog.json: "))
    }
}
