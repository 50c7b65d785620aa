import MapFormat

/// What `MapStore.updateAll()` did with one catalog of the store.
public struct CatalogUpdateResult: Sendable {
    /// What became of the catalog.
    public enum Outcome: String, Sendable, Equatable {
        /// Its newer version was installed (committed on its own: a later catalog's failure leaves it).
        case updated
        /// The check found no newer version; nothing changed.
        case upToDate
        /// Its check or its update failed (`error`); its regions and version are as they were.
        case failed
    }

    /// The catalog.
    public let catalog: CatalogID
    /// Its check's result; nil when the check failed.
    public let info: UpdateInfo?
    /// What became of it.
    public let outcome: Outcome
    /// Why it failed (`outcome == .failed`).
    public let error: MapStoreError?
}
