import Foundation
import MapFetch
import MapFormat
import TestSupport
import Testing

/// The one client for single GETs, against the fault server: what is worth another attempt, after
/// how long, and the size cap.
@Suite struct FetchClientTests {
    /// A served folder with one 64 KiB file, `doc.bin`, and the fault server over it.
    static func served() throws -> (TemporaryFolder, FaultServer, Data) {
        let folder = TemporaryFolder("fetch-client")
        let bytes = Data((0..<65_536).map { UInt8($0 % 251) })
        try bytes.write(to: URL(fileURLWithPath: folder.join("doc.bin")))
        return (folder, try FaultServer(root: folder.path), bytes)
    }

    /// The body of one GET, or its failure.
    static func get(_ client: FetchClient, _ url: URL, limit: Int64 = 1 << 20) -> Result<(FetchAnswer, Data), FetchFailure> {
        var body = Data()
        do {
            let answer = try client.get(url, limit: limit) { chunk in
                RawBytes.append(chunk, to: &body)
                return true
            }
            return .success((answer, body))
        } catch { return .failure(error) }
    }

    @Test func serviceUnavailableWaitsWhatRetryAfterSays() throws {
        let (folder, server, _) = try Self.served()
        defer { server.stop() }
        _ = folder
        let client = FetchClient(retry: RetryPolicy(maxAttempts: 3, maxRetryAfter: 120))
        guard case .failure(let failure) = Self.get(client, server.url("doc.bin", fault: "status", ["code": "503", "retry-after": "7"])) else {
            Issue.record("a 503 was a body")
            return
        }
        #expect(failure.isTransient && failure.httpStatus == 503 && failure.retryAfter == 7)
        #expect(client.retryDelay(after: failure, failures: 1) == 7)
        #expect(client.retryDelay(after: failure, failures: 3) == nil, "a retry past the policy's attempts")
    }

    @Test func notFoundIsAnAnswerAndNoFailureIsRetriedThatCannotChange() throws {
        let (folder, server, _) = try Self.served()
        defer { server.stop() }
        _ = folder
        let client = FetchClient(retry: RetryPolicy(maxAttempts: 5))
        guard case .success((.missing(404), _)) = Self.get(client, server.url("doc.bin", fault: "status", ["code": "404"])) else {
            Issue.record("a 404 was not `missing`")
            return
        }
        guard case .failure(let forbidden) = Self.get(client, server.url("doc.bin", fault: "status", ["code": "403"])) else {
            Issue.record("a 403 was a body")
            return
        }
        #expect(client.retryDelay(after: forbidden, failures: 1) == nil, "a 403 would be asked again")
        guard case .failure(let large) = Self.get(client, server.url("doc.bin"), limit: 1000) else {
            Issue.record("a body over the cap was taken")
            return
        }
        #expect(large == .tooLarge(url: server.url("doc.bin"), limit: 1000))
        #expect(client.retryDelay(after: large, failures: 1) == nil)
    }

    @Test func aWholeBodyOverHTTPAndFromAFileAreTheSame() throws {
        let (folder, server, bytes) = try Self.served()
        defer { server.stop() }
        let client = FetchClient()
        guard case .success((.body, let http)) = Self.get(client, server.url("doc.bin")),
            case .success((.body, let file)) = Self.get(client, URL(fileURLWithPath: folder.join("doc.bin")))
        else {
            Issue.record("no body")
            return
        }
        #expect(http == bytes && file == bytes)
        guard case .success((.missing(nil), _)) = Self.get(client, URL(fileURLWithPath: folder.join("absent.bin"))) else {
            Issue.record("a missing file was not `missing`")
            return
        }
    }
}
