/// Whose fix a failure is: the input's (a recipe, a source folder, an option, a file the user named)
/// or the work's (a server, the disk, a signature that does not hold). The CLI's exit code comes from
/// it (2 for bad input, 1 for failed work) in one place, `Mappack.exitCode(for:)`, never from an
/// error's text.
package enum FailureCategory: Sendable, Equatable {
    /// The input is wrong: fix it and run again (exit 2).
    case badInput
    /// The input was fine and the work failed (exit 1).
    case failedWork
}

/// An error that says whose fix it is. Each error type of the modules the CLI runs conforms beside
/// its declaration's module, so a new case cannot be added without its category being decided there.
package protocol CategorizedError: Error {
    /// Whose fix this failure is.
    var failureCategory: FailureCategory { get }
}

extension JSONFileError: CategorizedError {
    /// A JSON file that cannot be read as its format is input.
    package var failureCategory: FailureCategory { .badInput }
}
