import MapFormat
import Synchronization

/// The automatic updates' state: the schedule, the loop that runs it, the network the app reported
/// and an update waiting for a network the policy allows. Owned by one store; the loop holds the store
/// weakly, and this object cancels the loop when the store (and with it this object) goes away.
final class AutoUpdateSchedule: Sendable {
    private struct State {
        /// Time between automatic checks; nil checks only at open (and when `autoUpdate` is turned on).
        var interval: Duration?
        /// The loop running now and its generation; a loop whose generation is no longer current ends.
        var loop: Task<Void, Never>?
        var generation = 0
        /// The generation whose loop sleeps now (cancelling it then ends no work under way); set by the
        /// loop itself, so it is right also when the loop started sleeping before `install` recorded it.
        var sleepingGeneration: Int?
        /// Whether the network is metered: `Options.networkIsMetered`, then the last `networkChanged(metered:)`.
        var metered = false
        /// Per catalog, the version an automatic update waits with (network metered, or the app said
        /// later), and why. Keyed by catalog: two catalogs may offer the same version string.
        var deferred: [CatalogID: (version: MapVersion, reason: UpdateDeferral)] = [:]
        /// The app's say over automatic updates (`MapStore.autoUpdateApproval`); nil updates without asking.
        var approval: (@Sendable (UpdateInfo) -> AutoUpdateDecision)?
        /// Per catalog, the version the app declined: the store does not update that catalog to it by itself.
        var declined: [CatalogID: MapVersion] = [:]
        /// True while an automatic update runs (a second one is not started beside it).
        var updating = false
        /// Another automatic update was asked for while one ran (e.g. the network turned unmetered while
        /// the running one was deciding to defer): check again when it ends.
        var recheck = false
    }

    private let state = Mutex(State())
    /// What the loop waits on between checks: the continuous clock, or a test's own.
    private let clock: any Clock<Duration>

    init(interval: Duration? = nil, clock: any Clock<Duration> = ContinuousClock()) {
        self.clock = clock
        state.withLock { $0.interval = interval }
    }

    /// The wait before the next check of `generation`'s loop (marking it asleep), on the schedule's
    /// clock; it throws when the waiting task is cancelled. Nil when the loop should end (a newer
    /// generation, or no interval). The wait holds the clock, not the schedule, whose end cancels it.
    func nextWait(_ generation: Int) -> (@Sendable () async throws -> Void)? {
        guard let interval = sleepInterval(generation) else { return nil }
        let clock = clock
        return { try await Self.sleep(on: clock, for: interval) }
    }

    private static func sleep<C: Clock<Duration>>(on clock: C, for interval: Duration) async throws {
        try await clock.sleep(until: clock.now.advanced(by: interval), tolerance: nil)
    }

    deinit { state.withLock { $0.loop?.cancel() } }

    /// Time between automatic checks.
    var interval: Duration? {
        get { state.withLock { $0.interval } }
        set { state.withLock { $0.interval = newValue } }
    }

    /// Ends the current loop's schedule (a sleeping loop at once; one checking after its check) and
    /// returns the generation a new loop runs under.
    func newGeneration() -> Int {
        let (sleeper, generation) = state.withLock { state -> (Task<Void, Never>?, Int) in
            let sleeper = state.sleepingGeneration == state.generation ? state.loop : nil
            state.generation += 1
            state.loop = nil
            state.sleepingGeneration = nil
            return (sleeper, state.generation)
        }
        sleeper?.cancel()
        return generation
    }

    /// Records the loop of `generation`, unless a newer generation started meanwhile (then it is
    /// cancelled: it may already sleep, unseen by the `newGeneration` that replaced it).
    func install(_ loop: Task<Void, Never>, generation: Int) {
        let current = state.withLock { state -> Bool in
            guard state.generation == generation else { return false }
            state.loop = loop
            return true
        }
        if !current { loop.cancel() }
    }

    /// The time to sleep before the next check of `generation`'s loop (marking it asleep); nil when the
    /// loop should end (a newer generation, or no interval).
    private func sleepInterval(_ generation: Int) -> Duration? {
        state.withLock { state -> Duration? in
            guard state.generation == generation, let interval = state.interval else { return nil }
            state.sleepingGeneration = generation
            return interval
        }
    }

    /// Marks `generation`'s loop awake; false when it should end.
    func wake(_ generation: Int) -> Bool {
        state.withLock { state -> Bool in
            guard state.generation == generation else { return false }
            state.sleepingGeneration = nil
            return true
        }
    }

    /// Whether the network is metered, as the app last said.
    var metered: Bool { state.withLock { $0.metered } }

    /// Records a report; true when the network is unmetered now and an update waits for it.
    func report(metered: Bool) -> Bool {
        state.withLock { state -> Bool in
            state.metered = metered
            return !metered && !state.deferred.isEmpty
        }
    }

    /// Claims the right to run an automatic update; false when one runs already (which then checks
    /// again when it ends).
    func claimUpdate() -> Bool {
        state.withLock { state -> Bool in
            guard !state.updating else {
                state.recheck = true
                return false
            }
            state.updating = true
            return true
        }
    }

    /// Gives the claim back; true when another automatic update was asked for meanwhile.
    func endUpdate() -> Bool {
        state.withLock { state -> Bool in
            defer { state.recheck = false }
            state.updating = false
            return state.recheck
        }
    }

    /// Records that the update of `catalog` to `version` waits, for `reason`; true the first time for that
    /// catalog, version and reason (the app hears of a deferral once, not at every check).
    func deferUpdate(of catalog: CatalogID, to version: MapVersion, reason: UpdateDeferral) -> Bool {
        state.withLock { state -> Bool in
            defer { state.deferred[catalog] = (version, reason) }
            guard let before = state.deferred[catalog] else { return true }
            return before.version != version || before.reason != reason
        }
    }

    /// Nothing of `catalog` waits any more (its update ran, or no newer version of it is on offer).
    func clearDeferred(of catalog: CatalogID) { state.withLock { _ = $0.deferred.removeValue(forKey: catalog) } }

    /// The app's say over automatic updates.
    var approval: (@Sendable (UpdateInfo) -> AutoUpdateDecision)? {
        get { state.withLock { $0.approval } }
        set { state.withLock { $0.approval = newValue } }
    }

    /// Records that the app declined `catalog`'s `version`; true the first time (the app hears of it once).
    func decline(_ version: MapVersion, of catalog: CatalogID) -> Bool {
        state.withLock { state -> Bool in
            defer { state.declined[catalog] = version }
            return state.declined[catalog] != version
        }
    }

    /// True when the app declined the automatic update of `catalog` to `version`.
    func isDeclined(_ version: MapVersion, of catalog: CatalogID) -> Bool { state.withLock { $0.declined[catalog] == version } }
}
