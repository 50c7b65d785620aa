import Foundation
import MapFormat

/// A download cache folder that other users could plant files in: owned by someone else, writable
/// by others, or with a symbolic link where a folder belongs. Bad input; exit code 2.
package struct CacheFolderError: Error, Sendable, CustomStringConvertible {
    /// The folder concerned.
    package let path: String
    /// What is wrong with it.
    package let reason: String

    package var description: String {
        "download cache \(path) \(reason); another user could plant or replace bundles there. Use a cache folder of your own "
            + "(--cache DIR or XDG_CACHE_HOME), or fix this one: chown \(geteuid()) \(path) && chmod go-w \(path)"
    }
}

extension CacheFolderError: CategorizedError {
    /// A download cache folder the user named that cannot be used: input.
    package var failureCategory: FailureCategory { .badInput }
}
