import MapFormat

/// A state change the table in `RegionState` does not allow: a bug in the writer, refused before
/// anything is stored.
public struct RegionStateTransitionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The region concerned.
    public let region: RegionID
    /// Its stored state.
    public let from: RegionState
    /// The state a writer asked for.
    public let to: RegionState

    public var description: String {
        "region '\(region)': its state cannot change from \(from) to \(to); nothing was written (report this as a MapStore bug)"
    }
}
