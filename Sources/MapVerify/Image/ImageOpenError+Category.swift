import MapFormat

extension ImageOpenError: CategorizedError {
    /// A path that is no image, or an image whose manifest cannot be read: input.
    package var failureCategory: FailureCategory { .badInput }
}
