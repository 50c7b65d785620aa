/// Whether downloads, updates and repair's fetches may use a metered (cellular, tethered) network.
///
/// The store cannot see the network. Whether the network is metered is one fact, the one the app last
/// gave: `MapStore.Options.networkIsMetered` at open, then each `MapStore.networkChanged(metered:)`
/// (`MapStore.isNetworkMetered` reads it). The policy says what that fact allows.
public struct NetworkPolicy: Sendable {
    /// Allow downloads on metered networks.
    public var allowMetered: Bool

    /// Allows metered networks by default; a wifi-only app passes `allowMetered: false`.
    public init(allowMetered: Bool = true) {
        self.allowMetered = allowMetered
    }

    /// False when the policy forbids a network that is `metered`.
    func permits(metered: Bool) -> Bool { allowMetered || !metered }
}
