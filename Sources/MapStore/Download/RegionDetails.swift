import MapFormat

/// A catalog region as an app shows it: names, places, position, release time, state and sizes.
public struct RegionDetails: Sendable, Equatable {
    /// Catalog id.
    public let id: RegionID
    /// Parent id, when any.
    public let parent: RegionID?
    /// The name in the requested language (`de-CH → de → en → id`).
    public let name: String
    /// All localized names.
    public let names: [String: String]
    /// Cities and places the catalog lists for the region.
    public let cities: [String]
    /// Release time of the region's data (ISO 8601), when the catalog gives one.
    public let released: String?
    /// Latitude, longitude of the centre.
    public let center: [Double]?
    /// West, south, east, north.
    public let bbox: [Double]?
    /// The region's state on this device.
    public let state: RegionState
    /// The map version of the data described.
    public let mapVersion: MapVersion
    /// Compressed bytes still to download for the region and its descendants (bundles on the device not counted).
    public let downloadBytes: Int64
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
