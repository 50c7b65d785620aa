import Foundation

/// The two catalog URLs a store keeps apart: the installed one (`catalogURL`, which downloads and repair
/// resolve bundle URLs against) and the checked one, which the next check or update reads.
extension MapStore {
    /// The catalog the next `checkForUpdate()`, `update()` or automatic check reads when none is named: the
    /// one last checked or set with `setCatalogURL`, else `catalogURL`. A check of a newer catalog moves this
    /// one, not `catalogURL`; an update's commit makes both its catalog. Never waits for a write in progress.
    public var checkedCatalogURL: URL? { snapshot.catalogToCheck }
}
