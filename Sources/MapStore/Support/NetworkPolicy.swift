/// Whether downloads and updates may use a metered (cellular, tethered) network.
///
/// The store cannot see the network; the app tells it through `isNetworkMetered`, called before
/// every download or update starts, or by reporting changes with `MapStore.networkChanged(metered:)`
/// (once the app has reported, the last report is used instead of `isNetworkMetered`).
public struct NetworkPolicy: Sendable {
    /// Allow downloads on metered networks.
    public var allowMetered: Bool
    /// Says whether the current network is metered.
    public var isNetworkMetered: @Sendable () -> Bool

    /// Allows everything by default; an app that cares passes its own closure.
    public init(allowMetered: Bool = true, isNetworkMetered: @escaping @Sendable () -> Bool = { false }) {
        self.allowMetered = allowMetered
        self.isNetworkMetered = isNetworkMetered
    }

    /// False when the policy forbids the current network.
    var permitsCurrentNetwork: Bool { allowMetered || !isNetworkMetered() }
}
