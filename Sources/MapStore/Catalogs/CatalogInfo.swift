import Foundation
import MapFormat

/// One catalog of a store (`MapStore.catalogs()`): where it is, which map version of it the device holds,
/// and how its regions compare with the catalog last checked.
public struct CatalogInfo: Sendable, Equatable {
    /// The catalog's id (its `catalog` field).
    public let id: CatalogID
    /// True for the catalog the preinstalled image came from (the first one; it cannot be removed).
    public let isImageCatalog: Bool
    /// Where its regions are downloaded from (bundle URLs resolve against it); nil when none is known yet.
    public let url: URL?
    /// The catalog the next check or update of this catalog reads (the one last checked), else `url`.
    public let checkedURL: URL?
    /// The map version of this catalog's data on the device (for a catalog with nothing installed, the
    /// version its regions are offered at).
    public let mapVersion: MapVersion?
    /// That version's support window (ISO 8601), when the catalog declares one.
    public let supportedUntil: String?
    /// Its installed regions.
    public let installedRegions: [RegionID]
    /// Its update state from its installed regions: `oldData` when any is `outdated` (a check found a newer
    /// version), `expiredData` when any is `needUpdate`, `upToDate` otherwise; nil when none is installed.
    public let updateStatus: UpdateInfo.Status?
}
