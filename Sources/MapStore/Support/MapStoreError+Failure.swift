import Foundation
import MapFormat

extension MapStoreError: CategorizedError {
    /// Whose fix the failure is, for the CLI's exit code (`FailureCategory`): a region id, a catalog
    /// or a folder the caller gave is input; everything else is failed work. A catalog that cannot
    /// be used is input when it is a file (`invalidCatalog` carries its `URL`).
    package var failureCategory: FailureCategory {
        switch self {
        case .notInstalled, .unknownRegion, .unknownCatalogRegion, .noCatalogURL, .destinationNotEmpty, .notAnImage, .unknownCatalog,
            .catalogRegionClash, .catalogInUse, .catalogAlreadyAdded, .regionsOfSeveralCatalogs:
            .badInput
        case .invalidCatalog(let url, _): url.isFileURL ? .badInput : .failedWork
        case .invalidImage, .repairNeeded, .imageNeededForRepair, .repairFailed, .seedOlderThanStore, .invalidCacheSeed, .io, .local, .remote,
            .rollbackRefused, .meteredNetworkDisallowed, .updateRequired, .cancelled, .busy, .outOfSpace, .catalogUnsigned,
            .catalogSignatureInvalid, .catalogRollback, .catalogMixAndMatch, .catalogExpired, .catalogOtherLineage, .catalogResetRefused,
            .catalogTimestampStale, .catalogTimestampReplayed, .catalogTimestampExpired, .catalogTimestampMismatch, .ownershipConflict,
            .catalogTimestampMissing:
            .failedWork
        }
    }
}
