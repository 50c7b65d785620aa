/// The persistent storage's state as found when the store was opened; fixed for the process lifetime.
public enum StoreStatus: String, Sendable, Equatable, CustomStringConvertible {
    /// Installed, committed and consistent (quick checks, or full SHA-256 when asked).
    case ok
    /// Nothing installed and no image offered.
    case empty
    /// A first-start install started and never committed; `repair()` re-installs or rolls back.
    case interruptedInstall
    /// A delete, move or cache import started and never committed; `repair()` finishes or rolls it back.
    case interruptedOperation
    /// Installed files or the stored manifest do not match the state database; `repair()` restores them.
    case corrupted
    /// The state database is of an unknown format, or the offered image has another map version than the store.
    case versionMismatch

    public var description: String { rawValue }
}
