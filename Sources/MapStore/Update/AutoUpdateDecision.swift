/// The app's answer when the store is about to update by itself (`MapStore.autoUpdateApproval`, as Magic
/// Lane's `shouldUpdateWorldwideRoadMap` lets an app decline the world map's automatic update).
public enum AutoUpdateDecision: Sendable, Equatable {
    /// Update now (network policy permitting).
    case update
    /// Not now: the update waits, reported as `StoreEvent.updateDeferred(info, reason: .app(reason))`, and the
    /// app is asked again at the next automatic check (or when it reports an unmetered network).
    case later(reason: String)
    /// Not this version: the store does not update to it by itself, reported once as
    /// `StoreEvent.updateDeclined`; a newer version is asked about again, and `update` still installs it.
    case decline(reason: String)
}
