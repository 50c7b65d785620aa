import MapFormat

/// What a successful build produced.
package struct BuildReport: Sendable {
    package let imagePath: String
    package let packedPath: String?
    /// Every output the recipe asked for, in the order they are published, with its path.
    package let outputs: [BuildOutput]
    package let summary: ImageSummary
    /// Bytes this run fetched and verified (from the origin or a remote cache), not the plan's total.
    package var downloadedBytes: Int64
    package let bundles: Int
    /// True when nothing changed since the last build and nothing was rebuilt.
    package var upToDate = false
    /// The build record (`BuildStamp`) that a full disk kept from being written after the outputs
    /// were in place, whole: the next run builds them again rather than finding them up to date.
    package var unrecordedStamp: String?
}

/// One output a build published (or found up to date): its format and where it is.
package struct BuildOutput: Sendable {
    package let format: Recipe.OutputFormat
    package let path: String
}
