import Foundation
import MapFormat
import MapStore
import TestSupport
import Testing

/// `catalog.json.timestamp` on a device with trusted keys, against the attack server
/// (Tests/Support/catalog_attack_server.py): the catalog is fetched only when the timestamp names one
/// the device lacks, and a stale, replayed, expired or mismatched timestamp is each refused with its own case.
@Suite struct CatalogTimestampTests {
    typealias Setup = SignedCatalogTests.Setup

    @Test func catalogIsFetchedOnlyWhenTheTimestampNamesANewOne() async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "v2", timestamp: "v2")
        let store = try await setup.open()
        try await expectAccepted(setup, store)
        #expect(try setup.server.requests("/catalog.json.zst") == 1)
        #expect(try setup.server.requests("/catalog.json") == 0)
        // Nothing new: the timestamp alone.
        try await expectAccepted(setup, store)
        #expect(try setup.server.requests("/catalog.json.timestamp") == 2)
        #expect(try setup.server.requests("/catalog.json.zst") == 1)
        #expect(try setup.server.requests("/catalog.json.sig") == 1)
    }

    @Test func staleTimestampIsRefused() async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "v2", timestamp: "v2")
        let store = try await setup.open()
        try await expectAccepted(setup, store)
        try setup.server.serve(catalog: "v1", timestamp: "v1")
        guard case .catalogTimestampStale(_, let seen, let offered) = await setup.check(store) else {
            Issue.record("stale timestamp accepted")
            return
        }
        #expect(seen == 2 && offered == 1)
    }

    @Test func replayedTimestampIsRefusedAlsoAfterRestart() async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "ts7b", timestamp: "ts7b")
        try await expectAccepted(setup, try await setup.open())
        try setup.server.serve(catalog: "ts7b", timestamp: "ts7")
        guard case .catalogTimestampReplayed(_, let seen, let offered) = await setup.check(try await setup.open()) else {
            Issue.record("replayed timestamp accepted")
            return
        }
        #expect(seen == SignedCatalogSets.signedAt + 60 && offered == SignedCatalogSets.signedAt)
    }

    @Test func expiredTimestampIsRefused() async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "ts8", timestamp: "ts8")
        guard case .catalogTimestampExpired(_, let expires) = await setup.check(try await setup.open()) else {
            Issue.record("expired timestamp accepted")
            return
        }
        #expect(expires == "2027-01-15T09:00:00Z")
    }

    @Test func catalogOtherThanTheTimestampNamesIsRefused() async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "v2b", timestamp: "v2")
        guard case .catalogTimestampMismatch(let url, let reason) = await setup.check(try await setup.open()) else {
            Issue.record("mismatched catalog accepted")
            return
        }
        #expect(url.path.hasSuffix("/catalog.json.zst") && reason.contains("sha256"), "\(url): \(reason)")
    }

    @Test func timestampByAnotherKeyIsRefused() async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "v2", timestamp: "other")
        guard case .catalogSignatureInvalid(let url, _) = await setup.check(try await setup.open()) else {
            Issue.record("timestamp by another key accepted")
            return
        }
        #expect(url.path.hasSuffix("/catalog.json.timestamp"))
    }

    @Test func serverWithoutTimestampStillServesSignedCatalogs() async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "v2")
        let store = try await setup.open()
        try await expectAccepted(setup, store)
        #expect(try setup.server.requests("/catalog.json.timestamp") == 1)
        // The catalog came as its .zst, bound by the signature's SHA-256 (issue 43), not plain.
        #expect(try setup.server.requests("/catalog.json.zst") == 1)
        #expect(try setup.server.requests("/catalog.json") == 0)
        try setup.server.serve(catalog: "v1")
        guard case .catalogRollback = await setup.check(store) else {
            Issue.record("rollback accepted without a timestamp")
            return
        }
    }

    /// Freeze by deletion (issue 41 item 12): once the lineage came with timestamps, a check where the
    /// timestamp is gone (404) is refused like a stale one, not judged by the signature's 30-day expiry.
    @Test func missingTimestampIsRefusedOnceTheLineageHadOne() async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "v2", timestamp: "v2")
        let store = try await setup.open()
        try await expectAccepted(setup, store)
        try setup.server.serve(catalog: "v2")
        let refusal = await setup.check(store)
        guard case .catalogTimestampMissing(let url) = refusal else {
            Issue.record("a check without the timestamp was not refused as such: \(refusal.map { "\($0)" } ?? "accepted")")
            return
        }
        #expect(url.path.hasSuffix("/catalog.json.timestamp"), "\(url)")
        #expect(refusal?.category == .remote)
        // Refused before anything else was fetched; after a restart too.
        #expect(try setup.server.requests("/catalog.json.sig") == 1)
        guard case .catalogTimestampMissing = await setup.check(try await setup.open()) else {
            Issue.record("a missing timestamp was accepted after a restart")
            return
        }
    }

    /// A hostile `ETag` (issue 41 item 13): a 12,000-byte one, which a server that refuses request heads
    /// over 8 KiB would answer 400 forever once sent back, and one with a bare CR (header injection)
    /// are not kept; a server that refuses the validators sent gets one more request without them.
    @Test(arguments: ["long", "cr", "plain"]) func hostileOrRefusedValidatorsDoNotBreakLaterChecks(etag: String) async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "v2", timestamp: "v2", etag: etag)
        let store = try await setup.open()
        try await expectAccepted(setup, store)
        try await expectAccepted(setup, store)
        try await expectAccepted(setup, store)
        let refused = try setup.server.refused("/catalog.json.timestamp")
        // Only a server that refuses every conditional request refuses one, once per check.
        #expect(refused == (etag == "plain" ? 2 : 0))
    }

    private func expectAccepted(_ setup: Setup, _ store: MapStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let refusal = await setup.check(store)
        #expect(refusal == nil, "\(refusal.map { "\($0)" } ?? "")", sourceLocation: sourceLocation)
    }
}
