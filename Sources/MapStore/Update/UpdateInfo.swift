import MapFormat

/// What `checkForUpdate` found: how the installed data compares with a catalog, and what an update costs.
///
/// The status rule: `upToDate` when the catalog has the installed map version and that version's
/// support window (`Catalog.supportedUntil`, as recorded when the store last saw its own version's
/// catalog) has not passed; `oldData` when the catalog has a newer version and the installed
/// version is still supported (or declares no window); `expiredData` when the installed version's
/// window has passed (today, UTC, is after its `supportedUntil` date). A catalog with an older
/// version is refused with `MapStoreError.rollbackRefused`.
public struct UpdateInfo: Sendable, Equatable {
    /// How the installed data compares with the catalog.
    public enum Status: String, Sendable, Equatable {
        /// The catalog has the installed version, still supported.
        case upToDate
        /// A newer version exists; the installed one is still supported.
        case oldData
        /// The installed version's support window has passed.
        case expiredData
    }

    /// The store's catalog compared (`MapStore.catalogs()`).
    public let catalog: CatalogID
    /// The comparison's result.
    public let status: Status
    /// The installed map version.
    public let installedVersion: MapVersion
    /// The catalog's map version.
    public let availableVersion: MapVersion
    /// Compressed bytes an update downloads: bundles the installed regions need in the catalog's
    /// version that are not on the device, each counted once.
    public let updateBytes: Int64
    /// How many bundles that is.
    public let bundlesToFetch: Int
    /// Installed regions whose bundles differ in the catalog's version.
    public let changedRegions: [RegionID]
    /// Installed regions the catalog no longer has; they become `unsupported` after an update.
    public let unsupportedRegions: [RegionID]
    /// The support window of the installed version, when known (ISO 8601).
    public let supportedUntil: String?
}

/// How far an update is.
public struct UpdateProgress: Sendable, Equatable {
    /// The step under way.
    public enum Phase: String, Sendable, Equatable {
        /// Downloading the missing bundles.
        case fetching
        /// Extracting, staging and switching to the new version.
        case installing
        /// Committed.
        case done
    }

    /// The step under way.
    public let phase: Phase
    /// Bytes of the missing bundles on the device so far (resumed bytes count).
    public let receivedBytes: Int64
    /// Bytes of all missing bundles.
    public let totalBytes: Int64

    /// 0…1 of the download.
    public var fraction: Double { totalBytes > 0 ? min(1, Double(receivedBytes) / Double(totalBytes)) : 1 }
}
