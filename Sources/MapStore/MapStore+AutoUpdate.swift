import Foundation
import MapFormat

/// Automatic updates: a check at open and on the app's schedule, obeying the network policy; an update
/// the policy holds back waits for the app to report an unmetered network.
extension MapStore {
    /// Time between automatic update checks while `autoUpdate` is on (e.g. `.seconds(6 * 3600)`); nil
    /// checks only at open and when `autoUpdate` is turned on. Setting it starts the new schedule from now.
    public var autoUpdateInterval: Duration? {
        get { autoUpdates.interval }
        set {
            autoUpdates.interval = newValue
            scheduleAutomaticChecks(checkNow: false)
        }
    }

    /// The app's say over each automatic update, asked before it starts (Magic Lane's
    /// `shouldUpdateWorldwideRoadMap`): `.update`; `.later(reason:)`, and the update waits
    /// (`StoreEvent.updateDeferred` with `.app(reason:)`) until the app is asked again at the next automatic
    /// check; or `.decline(reason:)`, and the store does not update that catalog to that version by itself
    /// (`StoreEvent.updateDeclined`, once). Nil, the default, updates without asking. Updates the app starts
    /// (`update`, `startUpdate`) are not asked about. Set it before turning `autoUpdate` on: the check at
    /// open may otherwise run before it.
    public var autoUpdateApproval: (@Sendable (UpdateInfo) -> AutoUpdateDecision)? {
        get { autoUpdates.approval }
        set { autoUpdates.approval = newValue }
    }

    /// Whether the network is metered, as the app last said (`Options.networkIsMetered` at open, then
    /// `networkChanged(metered:)`).
    public var isNetworkMetered: Bool { autoUpdates.metered }

    /// True when the network policy lets downloads, updates and repair fetch now (see `networkChanged`).
    var networkPermitsFetching: Bool { networkPolicy.permits(metered: autoUpdates.metered) }

    /// At open: takes the schedule from the options and, with `autoUpdate` on, checks at once.
    func startAutomaticUpdates(interval: Duration?) {
        autoUpdates.interval = interval
        _ = autoUpdates.report(metered: options.networkIsMetered)
        if autoUpdate { scheduleAutomaticChecks(checkNow: true) }
    }

    /// `autoUpdate` changed: turning it on checks at once and starts the schedule; turning it off ends
    /// the schedule (an automatic update under way finishes).
    func autoUpdateChanged(to enabled: Bool) {
        scheduleAutomaticChecks(checkNow: enabled)
    }

    /// Replaces the loop of automatic checks: one now when `checkNow`, then one every `autoUpdateInterval`
    /// after the previous ended, while `autoUpdate` is on. The loop holds the store weakly, so a released
    /// store is never kept alive by its schedule; the schedule's owner cancels it then.
    func scheduleAutomaticChecks(checkNow: Bool) {
        let generation = autoUpdates.newGeneration()
        guard autoUpdate else { return }
        let loop = Task { [weak self] in
            var checkNow = checkNow
            while true {
                if !checkNow {
                    guard let wait = self?.autoUpdates.nextWait(generation) else { return }
                    do { try await wait() } catch { return }
                }
                checkNow = false
                guard let store = self, store.autoUpdates.wake(generation), store.autoUpdate else { return }
                await store.runAutomaticCheck()
            }
        }
        autoUpdates.install(loop, generation: generation)
    }

    /// One automatic check of each of the store's catalogs that has a URL, the image's first: a failed
    /// check is reported (`updateCheckFailed`) and the others and the schedule go on; a newer version is
    /// updated to, or deferred when the network policy forbids the network now.
    func runAutomaticCheck() async {
        for entry in catalogsOf(snapshot) where entry.catalog.toCheck != nil {
            guard autoUpdate else { return }
            let found: (info: UpdateInfo, url: URL)
            do {
                found = try await findUpdate(catalog: nil, in: entry.catalog.id)
            } catch {
                broadcaster.send(.updateCheckFailed(error))
                continue
            }
            guard found.info.availableVersion > found.info.installedVersion else {
                autoUpdates.clearDeferred(of: entry.catalog.id)
                continue
            }
            // A failed update is reported by `update` itself (`updateFailed`); the next check tries again.
            try? await updateAutomatically(found.info, catalog: found.url)
        }
    }

    /// Runs the update `info` describes, unless the app declines or defers it (`autoUpdateApproval`) or the
    /// network policy forbids the network now (then it is deferred). While another automatic update runs,
    /// does nothing but ask it to check again when it ends.
    func updateAutomatically(_ info: UpdateInfo, catalog url: URL) async throws(MapStoreError) {
        guard autoUpdates.claimUpdate() else { return }
        defer {
            if autoUpdates.endUpdate() { Task { [weak self] in await self?.runAutomaticCheck() } }
        }
        guard !autoUpdates.isDeclined(info.availableVersion, of: info.catalog) else { return }
        switch autoUpdates.approval?(info) ?? .update {
        case .update: break
        case .later(let reason):
            deferUpdate(info, reason: .app(reason: reason))
            return
        case .decline(let reason):
            if autoUpdates.decline(info.availableVersion, of: info.catalog) { broadcaster.send(.updateDeclined(info, reason: reason)) }
            return
        }
        guard networkPermitsFetching else {
            deferUpdate(info, reason: .meteredNetwork)
            return
        }
        do {
            try await update(catalog: url, in: info.catalog)
            autoUpdates.clearDeferred(of: info.catalog)
        } catch {
            // The network turned metered between the check and the update's start.
            guard case .meteredNetworkDisallowed = error else { throw error }
            deferUpdate(info, reason: .meteredNetwork)
        }
    }

    private func deferUpdate(_ info: UpdateInfo, reason: UpdateDeferral) {
        if autoUpdates.deferUpdate(of: info.catalog, to: info.availableVersion, reason: reason) {
            broadcaster.send(.updateDeferred(info, reason: reason))
        }
    }
}
