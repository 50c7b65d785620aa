import MapFormat

/// What a successful build produced.
package struct BuildReport: Sendable {
    package let imagePath: String
    package let packedPath: String?
    package let summary: ImageSummary
    /// Bytes this run fetched and verified (from the origin or a remote cache), not the plan's total.
    package var downloadedBytes: Int64
    package let bundles: Int
    /// True when nothing changed since the last build and nothing was rebuilt.
    package var upToDate = false
}
