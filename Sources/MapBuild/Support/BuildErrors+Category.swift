import Foundation
import MapFormat

// Whose fix each of MapBuild's errors is (`FailureCategory`): a `switch` per type, so a new case
// decides its category where it is declared.

extension RecipeError: CategorizedError {
    /// A recipe the user wrote: input.
    package var failureCategory: FailureCategory { .badInput }
}

extension PublishError: CategorizedError {
    /// A source folder or option `publish` refuses: input.
    package var failureCategory: FailureCategory { .badInput }
}

extension MergeError: CategorizedError {
    /// Shard outputs `merge` refuses: input.
    package var failureCategory: FailureCategory { .badInput }
}

extension ImportError: CategorizedError {
    /// Bad input, unless the import itself failed.
    package var failureCategory: FailureCategory { isBadInput ? .badInput : .failedWork }
}

extension CatalogSource.LoadError: CategorizedError {
    /// A catalog whose signature does not hold is failed work; one that cannot be read or used is
    /// input here (in a build's plan a server's failure is failed work: `PlanError`), as is a trust
    /// ledger's damaged file.
    package var failureCategory: FailureCategory {
        switch self {
        case .untrusted: .failedWork
        case .unreadable, .malformed, .invalid, .ledger: .badInput
        }
    }
}

extension PlanError: CategorizedError {
    /// A plan that exceeds the capacity is failed work, and so is a catalog whose signature does not
    /// hold or that a server failed to serve (its `URL` is no file); else the recipe or catalog is input.
    package var failureCategory: FailureCategory {
        switch self {
        case .capacityExceeded, .catalog(.untrusted): .failedWork
        case .catalog(.unreadable(let url, _)) where !url.isFileURL: .failedWork
        case .catalog, .resolution, .mapVersionMismatch: .badInput
        }
    }
}

extension BuildError: CategorizedError {
    /// A plan's error is the plan's category; inputs that contradict each other are input; the rest
    /// (fetching, unpacking, writing) is failed work.
    package var failureCategory: FailureCategory {
        switch self {
        case .plan(let error): error.failureCategory
        case .pathInTwoBundles, .mixedTileFormats, .releasedNotATime: .badInput
        case .fetch, .bundleRejected, .damagedInCache, .output, .tileDatabaseRefused, .offline, .notEnoughSpace, .diskFull: .failedWork
        }
    }
}
