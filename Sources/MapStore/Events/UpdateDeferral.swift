/// Why an automatic update waits (`StoreEvent.updateDeferred`).
public enum UpdateDeferral: Sendable, Equatable {
    /// The network is metered and `networkPolicy` does not allow metered networks; the update starts
    /// when the app reports an unmetered network (`MapStore.networkChanged(metered: false)`) or a later
    /// automatic check finds the network allowed.
    case meteredNetwork
    /// The app said not now (`AutoUpdateDecision.later`), for this reason; it is asked again at the next
    /// automatic check or unmetered-network report.
    case app(reason: String)
}
