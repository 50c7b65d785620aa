import Foundation
import MapFormat
import MapStore
import TestSupport
import Testing

/// Issue 29, items 2–4 on a device: it follows the lineage of the image it installed, a frozen
/// counter is recovered by a cosigned reset, and a signature with a repeated key is refused.
@Suite struct CatalogLineageDeviceTests {
    typealias Setup = SignedCatalogTests.Setup

    @Test func anotherLineageIsRefusedAndDoesNotBlockTheRealOne() async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "beta")
        let store = try await setup.open()
        guard case .catalogOtherLineage(_, let following, let offered) = await setup.check(store) else {
            Issue.record("another lineage accepted")
            return
        }
        #expect(following == "fixture" && offered == "fixture-beta")
        await #expect(throws: MapStoreError.self) { try await store.update(catalog: setup.server.catalogURL) }
        try setup.server.serve(catalog: "v2")
        #expect(await setup.check(try await setup.open()) == nil)
    }

    @Test func aSignatureWithARepeatedKeyIsRefused() async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "dupkey")
        guard case .catalogSignatureInvalid(_, let reason) = await setup.check(try await setup.open()) else {
            Issue.record("repeated key accepted")
            return
        }
        #expect(reason.contains("appears twice"), "\(reason)")
    }

    @Test func aSignatureVersionWrittenWithAnExponentIsRefused() async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "exponent")
        let refusal = await setup.check(try await setup.open())
        guard case .catalogSignatureInvalid(_, let reason) = refusal else {
            Issue.record("a version written 2e0 was accepted: \(refusal.map { "\($0)" } ?? "no refusal")")
            return
        }
        #expect(reason.contains("2e0") && reason.contains("integer"), "\(reason)")
    }

    @Test func aFrozenVersionIsRecoveredByALineageReset() async throws {
        let setup = try await Setup()
        try setup.server.serve(catalog: "frozen")
        #expect(await setup.check(try await setup.open()) == nil)
        try setup.server.serve(catalog: "v2")
        guard case .catalogRollback = await setup.check(try await setup.open()) else {
            Issue.record("rollback below the frozen version accepted")
            return
        }
        try setup.server.serve(catalog: "reset")
        #expect(await setup.check(try await setup.open()) == nil)
        try setup.server.serve(catalog: "after")
        #expect(await setup.check(try await setup.open()) == nil)
        try setup.server.serve(catalog: "frozen")
        guard case .catalogResetRefused = await setup.check(try await setup.open()) else {
            Issue.record("the old epoch's frozen catalog was accepted after the reset")
            return
        }
    }
}
