import Foundation
import MapFormat
import MapStore
import Testing

/// Apps branch on failures and events by stable codes (issue 40 item 6): a struct code has no exhaustive
/// `switch`, so a case a later library adds does not break an app's build. Through the public API only.
@Suite struct EvolvableTypesTests {
    /// How an app is meant to branch: on the code, with a `default` the compiler always asks for.
    static func advice(for error: MapStoreError) -> String {
        switch error.code {
        case .cancelled: "nothing to do"
        case .outOfSpace: "free some space"
        case .meteredNetworkDisallowed: "wait for Wi-Fi"
        default: "show \(error.code)"
        }
    }

    @Test func errorCodesAreStableNamesOnePerCase() {
        #expect(MapStoreError.cancelled.code == .cancelled)
        #expect(MapStoreError.cancelled.code.rawValue == "cancelled")
        #expect(MapStoreError.outOfSpace(storage: "/s", path: "/s/x", errno: 28).code.rawValue == "out-of-space")
        #expect(MapStoreError.ownershipConflict(path: "p", owners: ["a", "b"]).code.rawValue == "ownership-conflict")
        #expect(MapStoreError.remote(url: URL(string: "https://u")!, httpStatus: 503, regions: [], bundle: nil, reason: "r").code == .remote)
        #expect(Self.advice(for: .meteredNetworkDisallowed(regions: ["europe/li"])) == "wait for Wi-Fi")
        #expect(Self.advice(for: .noCatalogURL) == "show no-catalog-url")
        let names = MapStoreError.Code.all.map(\.rawValue)
        #expect(Set(names).count == names.count, "two cases share a code")
        #expect(names.allSatisfy { $0.allSatisfy { $0.isLowercase || $0 == "-" } })
        // A code a newer library sends (or an app stored) round-trips by its name.
        #expect(MapStoreError.Code(rawValue: "catalog-expired") == .catalogExpired)
    }

    @Test func eventKindsAreStableNamesOnePerCase() {
        #expect(StoreEvent.availableRegionsChanged.kind.rawValue == "available-regions-changed")
        #expect(StoreEvent.regionStateChanged("europe/li", .paused).kind == .regionStateChanged)
        #expect(StoreEvent.updateFailed(.cancelled).kind == .updateFailed)
        let names = StoreEvent.Kind.all.map(\.rawValue)
        #expect(Set(names).count == names.count, "two events share a kind")
    }
}
