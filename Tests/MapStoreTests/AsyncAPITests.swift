import Foundation
import MapFormat
import MapIO
import MapStore
import Synchronization
import TestSupport
import Testing

/// Old-API probe (pre-change): cancelling the calling task must stop long store work.
@Suite struct AsyncAPITests {
    @Test func cancelledOpenLeavesAnEmptyStorageAndALaterOpenInstalls() async throws {
        _ = try await offPool { StoreFixture.shared }
        let device = Device()
        let opening = Task { try await device.open(image: StoreFixture.shared.image(archive: false)) }
        opening.cancel()
        let outcome = await opening.result
        #expect(cancelled(outcome), "\(outcome)")
    }

    @Test func cancelledMoveLeavesTheStoreWhereItWas() async throws {
        _ = try await offPool { StoreFixture.shared }
        let device = Device()
        let store = try await device.open(image: StoreFixture.shared.image(archive: false))
        let moving = Task { try await store.moveData(to: URL(fileURLWithPath: device.folder.join("moved"))) }
        moving.cancel()
        let outcome = await moving.result
        #expect(cancelled(outcome), "\(outcome)")
    }
}

/// True when `result` failed with `MapStoreError.cancelled`.
func cancelled<T>(_ result: Result<T, any Error>) -> Bool {
    if case .failure(MapStoreError.cancelled) = result { true } else { false }
}
