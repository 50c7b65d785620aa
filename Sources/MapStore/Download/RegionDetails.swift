import Foundation
import MapFormat

/// A catalog region as an app shows it in a list of regions to download (HERE's `Region`, Yandex's
/// `OfflineCacheRegion`): names, children, position, release time, state and sizes.
public struct RegionDetails: Sendable, Equatable {
    /// Catalog id.
    public let id: RegionID
    /// Parent id, when any.
    public let parent: RegionID?
    /// The regions directly below this one, sorted by id (downloading this region brings them all).
    public let children: [RegionID]
    /// The name in the requested language (`de-CH → de`), else the image's language, English, the id: the
    /// rule `InstalledRegion.name` follows, so a region keeps its name when it is installed.
    public let name: String
    /// All localized names.
    public let names: [String: String]
    /// Cities and places the catalog lists for the region.
    public let cities: [String]
    /// When the region's data was released (the catalog's ISO 8601 time); nil when it gives none or
    /// an unreadable one.
    public let released: Date?
    /// The centre; nil when the catalog gives none (or not a valid latitude, longitude).
    public let center: GeoCoordinate?
    /// The area the region covers; nil when the catalog gives none (or not a valid box).
    public let boundingBox: GeoBoundingBox?
    /// The region's state on this device.
    public let state: RegionState
    /// The map version of the data described.
    public let mapVersion: MapVersion
    /// Compressed bytes still to download for the region and its descendants: bundles already on the
    /// device are not counted (0 once installed).
    public let downloadSizeInBytes: Int64
    /// Bytes the region and its descendants take on the storage once installed: each bundle's size on
    /// disk at the store's block size, as the catalog declares it (the size of its files rounded up to
    /// whole blocks when the catalog does not), every bundle counted once, whether on the device or not.
    public let sizeOnDiskInBytes: Int64
    /// The store's catalog the region is of (nil when unknown: an installed region none of them offers).
    public let catalog: CatalogID?

    init(
        id: RegionID, parent: RegionID?, children: [RegionID], name: String, names: [String: String], cities: [String], released: String?,
        center: [Double]?, bbox: [Double]?, state: RegionState, mapVersion: MapVersion, downloadSizeInBytes: Int64, sizeOnDiskInBytes: Int64,
        catalog: CatalogID? = nil
    ) {
        self.id = id
        self.catalog = catalog
        self.parent = parent
        self.children = children
        self.name = name
        self.names = names
        self.cities = cities
        self.released = ReleaseTime.parse(released)
        self.center = GeoCoordinate(catalogPair: center)
        self.boundingBox = GeoBoundingBox(catalogBox: bbox)
        self.state = state
        self.mapVersion = mapVersion
        self.downloadSizeInBytes = downloadSizeInBytes
        self.sizeOnDiskInBytes = sizeOnDiskInBytes
    }
}

/// Space a download needs on the storage's filesystem.
public struct SpaceEstimate: Sendable, Equatable {
    /// Compressed bytes still to fetch (bytes of partial downloads already on the device subtracted).
    public let fetchBytes: Int64
    /// Bytes the extracted files allocate (by the store's block size).
    public let writeBytes: Int64
    /// Peak extra space during the install: fetched archives stay until the switch commits, beside the extracted files.
    public var peakBytes: Int64 { fetchBytes + writeBytes + temporaryBytes }
    /// Downloaded archives (already verified or partial) that also stay until the commit.
    public let temporaryBytes: Int64
    /// Free bytes of the storage's filesystem now.
    public let freeBytes: Int64
    /// True when `peakBytes` exceeds `freeBytes`.
    public var mayBeOutOfSpace: Bool { peakBytes > freeBytes }
}
