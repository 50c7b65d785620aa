import MapFormat

/// A region's state, as in map SDKs' offline region lists. Stored as its raw value in the
/// `regions` and `downloads` tables of `state.sqlite` and in a pending transition's record.
///
/// Every change of a stored state goes through `transition(to:)` (`StateDatabase` calls it for each
/// row it writes), so the allowed moves live in one table here: `allowedNext`, a `switch` the compiler checks
/// covers every state.
public enum RegionState: String, Sendable, Equatable, CaseIterable {
    /// Offered by the catalog, not installed and not being fetched (no row in the state database).
    case available
    /// Being fetched: a run-time download of a region not installed yet, or an installed region an
    /// update is replacing (its old data stays usable until the update commits).
    case downloading
    /// A run-time download stopped by `pause()`, or by a process that ended while downloading; or an
    /// installed region whose update was paused (`UpdateTask.pause()`; its old data stays usable).
    /// Resumes from the bytes already fetched.
    case paused
    /// Installed, checked against its files, and usable.
    case completed
    /// Installed and usable; the catalog offers a newer map version.
    case outdated
    /// Installed and usable, but the catalog no longer has it: an update kept its old data and does
    /// not update it again.
    case unsupported
    /// Installed, but its data must be updated before use: the support window of its map version
    /// has passed, or its stored state was not one this library knows (see `init(stored:)`).
    case needUpdate

    /// The state a stored value names. A value this library does not know (written by a newer
    /// library, or damaged) reads as `needUpdate`, never as installed and usable: the store then opens
    /// as `corrupted`, and `repair()` checks the region's files and records it `completed` again.
    init(stored value: String) {
        self = RegionState(rawValue: value) ?? .needUpdate
    }

    /// True when `value` is a state this library writes.
    static func isKnown(stored value: String) -> Bool { RegionState(rawValue: value) != nil }

    /// The value stored for this state.
    var storedValue: String { rawValue }

    /// The states this state may change to (besides staying as it is). One `switch` without a
    /// `default`, so a new state does not compile until it has its row.
    var allowedNext: Set<RegionState> {
        switch self {
        // Install and run-time download commits create rows; a download starts.
        // (`paused` too: a download paused before its first byte keeps its place.)
        case .available: [.completed, .downloading, .paused]
        // A download pauses, is cancelled or commits; an update fails (back to `outdated`) or commits.
        case .downloading: [.paused, .available, .completed, .outdated, .unsupported]
        // A paused update's regions are installed: a cancel or a check makes them outdated (or due) again.
        case .paused: [.downloading, .available, .completed, .outdated, .needUpdate]
        // An update check marks, an update starts, an update drops the region.
        case .completed: [.outdated, .needUpdate, .downloading, .unsupported]
        case .outdated: [.completed, .needUpdate, .downloading, .unsupported]
        // An update or a repair (which checks the files) makes it usable again.
        case .needUpdate: [.completed, .outdated, .downloading, .unsupported]
        // Nothing updates a region the catalog dropped.
        case .unsupported: []
        }
    }

    /// Whether this state may change to `next`.
    func allows(_ next: RegionState) -> Bool {
        next == self || allowedNext.contains(next)
    }

    /// `next`, when this state may change to it; else throws naming `region` and both states.
    func transition(to next: RegionState, region: RegionID) throws(RegionStateTransitionError) -> RegionState {
        guard allows(next) else { throw RegionStateTransitionError(region: region, from: self, to: next) }
        return next
    }
}
