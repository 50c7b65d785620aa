import Foundation
import MapFormat
import MapIO
import TestSupport
import Testing

@testable import MapStore

@Suite struct RegionStateTests {
    @Test(arguments: RegionState.allCases)
    func storedValueReadsBackAsTheSameState(state: RegionState) {
        #expect(RegionState(stored: state.storedValue) == state)
        #expect(state.allows(state))
    }

    @Test(arguments: ["archived", "", "Completed", "completed "])
    func unknownStoredValueReadsAsNeedUpdateNeverAsUsable(value: String) {
        #expect(RegionState(stored: value) == .needUpdate)
        #expect(!RegionState.isKnown(stored: value))
    }

    /// Every move a writer makes (install, run-time download, pause, cancel, update check, update, repair).
    static let allowed: [(RegionState, RegionState)] = [
        (.available, .completed), (.available, .downloading), (.available, .paused),
        (.downloading, .paused), (.downloading, .available), (.downloading, .completed), (.downloading, .outdated), (.downloading, .unsupported),
        (.paused, .downloading), (.paused, .available), (.paused, .completed), (.paused, .outdated), (.paused, .needUpdate),
        (.completed, .outdated), (.completed, .needUpdate), (.completed, .downloading), (.completed, .unsupported),
        (.outdated, .completed), (.outdated, .needUpdate), (.outdated, .downloading), (.outdated, .unsupported),
        (.needUpdate, .completed), (.needUpdate, .outdated), (.needUpdate, .downloading), (.needUpdate, .unsupported),
    ]

    @Test func transitionTableAllowsExactlyTheWritersMoves() async throws {
        for from in RegionState.allCases {
            for to in RegionState.allCases {
                let expected = from == to || RegionStateTests.allowed.contains { $0 == (from, to) }
                #expect(from.allows(to) == expected, "\(from) → \(to)")
                if expected {
                    #expect(try from.transition(to: to, region: "europe/ch") == to)
                } else {
                    #expect(throws: RegionStateTransitionError(region: "europe/ch", from: from, to: to)) {
                        try from.transition(to: to, region: "europe/ch")
                    }
                }
            }
        }
    }

    /// A new state needs a row (`allowedNext` does not compile without one) and a way in: every state
    /// is reached from `available`, and every state but `unsupported` has a way out.
    @Test func everyStateIsReachableFromAvailable() {
        var reached: Set<RegionState> = [.available]
        var frontier: [RegionState] = [.available]
        while let state = frontier.popLast() {
            for next in state.allowedNext where reached.insert(next).inserted { frontier.append(next) }
        }
        #expect(reached == Set(RegionState.allCases))
        #expect(RegionState.allCases.filter { $0.allowedNext.isEmpty } == [.unsupported])
    }

    @Test func refusedTransitionWritesNothing() async throws {
        let device = Device()
        let store = try await device.open(image: StoreFixture.shared.image(archive: false))
        let id = try #require(try store.regions().first?.id)
        try SQLiteDatabase(path: device.storage + "/" + StoreLayout.stateFileName)
            .execute("UPDATE regions SET state = 'unsupported' WHERE id = '\(id.rawValue)'")
        let state = try StateDatabase(path: device.storage + "/" + StoreLayout.stateFileName)
        #expect(throws: RegionStateTransitionError(region: id, from: .unsupported, to: .completed)) {
            try state.setStates([id: .completed])
        }
        #expect(try state.regions().first { $0.id == id }?.state == .unsupported)
    }

    @Test func unknownStoredStateOpensCorruptedAndRepairRecordsItFromTheFiles() async throws {
        let device = Device()
        let image = StoreFixture.shared.image(archive: false)
        _ = try await device.open(image: image)
        try SQLiteDatabase(path: device.storage + "/" + StoreLayout.stateFileName)
            .execute("UPDATE regions SET state = 'archived' WHERE id = 'europe/ch/zh'")
        let store = try await device.open(image: image, full: true)
        #expect(store.initialStatus == .corrupted)
        #expect(try store.regions().first { $0.id == "europe/ch/zh" }?.state == .needUpdate)
        let verified = try await MapStore.verifyInstalled(storage: URL(fileURLWithPath: device.storage), full: false)
        #expect(verified.problems.map(\.kind) == [.unknownRegionState])
        #expect(verified.problems.first?.regions == ["europe/ch/zh"])
        let log = AutoUpdateTests.EventLog(store.events())
        let report = try await store.repair()
        #expect(report.actions.contains { if case .rebuiltState = $0 { true } else { false } })
        #expect(try store.regions().allSatisfy { $0.state == .completed })
        #expect(try await device.open(full: true).initialStatus == .ok)
        // Consumers of events() hear the state the repair recorded, then the repair's report.
        #expect(await eventually { log.all.contains { if case .repaired = $0 { true } else { false } } })
        let seen = log.all.compactMap { event -> String? in
            switch event {
            case .regionStateChanged(let id, let state): "\(id) \(state)"
            case .repaired(let repaired): repaired == report ? "repaired" : "another report"
            default: nil
            }
        }
        #expect(seen == ["europe/ch/zh completed", "repaired"], "\(seen)")
    }
}
