/// The persistent storage's state as found when the store was opened; fixed for the process lifetime.
public enum StoreStatus: String, Sendable, Equatable, CustomStringConvertible {
    /// Installed and committed, no operation pending (from the state database; with `fullValidation`,
    /// also every file checked by SHA-256).
    case ok
    /// Nothing installed and no image offered.
    case empty
    /// A first-start install started and never committed; `repair()` re-installs or rolls back.
    case interruptedInstall
    /// A delete, move or cache import started and never committed; `repair()` finishes or rolls it back.
    case interruptedOperation
    /// The state database cannot be read or records region states this library does not know, the store
    /// folder or kept manifest is gone, or (with `fullValidation`) installed files or the kept manifest do
    /// not match the state; `repair()` restores them.
    case corrupted
    /// The state database is of an unknown format, or the offered image folder is of a newer map version
    /// than the store (`repair()` installs it).
    case versionMismatch

    public var description: String { rawValue }
}
