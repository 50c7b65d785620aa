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
    /// Allocated bytes of the region's and its descendants' files, shared bundles once, wherever they
    /// lie: in an in-place store the base's files count too (see `bytesLocation`, `freedByDeletingInBytes`).
    public let sizeOnDiskInBytes: Int64
    /// The region's state.
    public let state: RegionState
    /// The map version of its data.
    public let mapVersion: MapVersion
    /// Where the files of the region and its descendants are: always `storage` in a store that copied
    /// its image; in an in-place store `base`, `storage` (downloaded on the device) or both.
    public internal(set) var bytesLocation: RegionBytesLocation = .storage
    /// Bytes `deleteRegions([id])` frees in the storage folder: the allocated size of the storage's
    /// files of the region and its descendants that no other installed region uses. 0 for a region
    /// read from the base (its bytes stay in the read-only base); at most `sizeOnDiskInBytes`.
    public internal(set) var freedByDeletingInBytes: Int64 = 0
}
