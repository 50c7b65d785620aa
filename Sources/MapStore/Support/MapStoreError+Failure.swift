import Foundation
import MapFormat

extension MapStoreError: CategorizedError {
    /// Whose fix the failure is, for the CLI's exit code (`FailureCategory`): a region id, a catalog
    /// or a folder the caller gave is input; everything else is failed work. A catalog that cannot
    /// be used is input when it is a file: `invalidCatalog`'s payload is public and fixed (apps match
    /// on it), so its source travels as the string MapStore made of the catalog's `URL`
    /// (`absoluteString`, or a path), read back here as a `URL`; no caller reads it.
    package var failureCategory: FailureCategory {
        switch self {
        case .notInstalled, .unknownRegion, .unknownCatalogRegion, .noCatalogURL, .destinationNotEmpty, .notAnImage, .unknownCatalog,
            .catalogRegionClash, .catalogInUse, .catalogAlreadyAdded, .regionsOfSeveralCatalogs:
            .badInput
        case .invalidCatalog(let url, _): Self.namesFile(url) ? .badInput : .failedWork
        case .invalidImage, .repairNeeded, .imageNeededForRepair, .repairFailed, .seedOlderThanStore, .invalidCacheSeed, .io, .local, .remote,
            .rollbackRefused, .meteredNetworkDisallowed, .updateRequired, .cancelled, .busy, .outOfSpace, .catalogUnsigned,
            .catalogSignatureInvalid, .catalogRollback, .catalogMixAndMatch, .catalogExpired, .catalogOtherLineage, .catalogResetRefused,
            .catalogTimestampStale, .catalogTimestampReplayed, .catalogTimestampExpired, .catalogTimestampMismatch, .ownershipConflict,
            .catalogTimestampMissing:
            .failedWork
        }
    }

    /// True when `source` (a catalog's URL as MapStore wrote it) is a file: a `file:` URL or a path.
    private static func namesFile(_ source: String) -> Bool {
        source.hasPrefix("/") || URL(string: source)?.isFileURL == true
    }
}
