import MapFormat

/// One region of the persistent storage.
public struct InstalledRegion: Sendable, Equatable {
    /// Catalog id.
    public let id: RegionID
    /// Parent id in the catalog, when any.
    public let parent: RegionID?
    /// The name in the requested language (`de-CH → de`), else the image's language, English, the id: the
    /// rule `RegionDetails.name` follows, so a region has one name on offer and installed.
    public let name: String
    /// Allocated bytes of the region's and its descendants' files, shared bundles once.
    public let sizeOnDiskInBytes: Int64
    /// The region's state.
    public let state: RegionState
    /// The map version of its data.
    public let mapVersion: MapVersion
}
