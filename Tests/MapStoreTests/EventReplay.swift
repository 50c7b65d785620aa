import Foundation
import MapFormat
import MapStore
import Synchronization
import Testing

/// A consumer of a store's `events()` that applies every `regionStateChanged` to the region states the
/// store showed when it started: when the events announce every change, the replayed states equal
/// the store's at any moment the store is quiet.
final class EventReplay: Sendable {
    /// The replayed states, shared with the consuming task.
    private final class States: Sendable {
        let value: Mutex<[RegionID: RegionState]>
        init(_ states: [RegionID: RegionState]) { value = Mutex(states) }
    }

    let store: MapStore
    /// How the store's states are read (by default `observed`, its public listings).
    private let observe: @Sendable (MapStore) -> [RegionID: RegionState]
    private let states: States
    private let watcher: Task<Void, Never>

    init(_ store: MapStore, observing observe: @escaping @Sendable (MapStore) -> [RegionID: RegionState] = EventReplay.observed) {
        self.store = store
        self.observe = observe
        let states = States(observe(store))
        self.states = states
        // Subscribed now, before the caller's next operation, so no event of it is missed.
        let events = store.events()
        watcher = Task {
            for await case .regionStateChanged(let id, let state) in events {
                states.value.withLock { $0[id] = state == .available ? nil : state }
            }
        }
    }

    deinit { watcher.cancel() }

    /// Every region state the store shows through its public API (installed regions, and catalog
    /// regions being downloaded or paused); `available` ones are left out.
    static func observed(_ store: MapStore) -> [RegionID: RegionState] {
        var states: [RegionID: RegionState] = [:]
        for region in (try? store.availableRegions()) ?? [] where region.state != .available { states[region.id] = region.state }
        for region in (try? store.regions()) ?? [] { states[region.id] = region.state }
        return states
    }

    /// Nil when the replayed states reach the store's within `seconds` (events arrive on another task);
    /// else what differs, region by region.
    func mismatch(within seconds: Double = 10) async -> String? {
        let agrees = await eventually(seconds) { states.value.withLock { $0 } == observe(store) }
        guard !agrees else { return nil }
        let now = observe(store)
        let heard = states.value.withLock { $0 }
        return Set(now.keys).union(heard.keys).sorted().filter { now[$0] != heard[$0] }.map {
            "\($0): store \(now[$0].map { "\($0)" } ?? "available"), events \(heard[$0].map { "\($0)" } ?? "available")"
        }.joined(separator: "; ")
    }
}
