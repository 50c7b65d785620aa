import MapFormat

/// What a successful build produced.
package struct BuildReport: Sendable {
    package let imagePath: String
    package let packedPath: String?
    package let summary: ImageSummary
    package let downloadedBytes: Int64
    package let bundles: Int
    /// True when nothing changed since the last build and nothing was rebuilt.
    package var upToDate = false
}
