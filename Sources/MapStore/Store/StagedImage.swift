import MapFormat

/// An image validated and copied (or extracted) into the staging folder, ready to be renamed into place.
struct StagedImage {
    /// The image's manifest as checked, but its file list (a streamed check keeps none).
    var manifest: ManifestHeader
    /// The staged cache seed, checked (digest and rows), when the image has one.
    var seed: String?
    /// True when the image's `manifest.sig` is staged beside its manifest.
    var signed: Bool
}
