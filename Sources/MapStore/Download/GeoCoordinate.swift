/// A point on the WGS 84 ellipsoid, in degrees.
public struct GeoCoordinate: Sendable, Hashable {
    /// Degrees north of the equator, -90…90.
    public var latitude: Double
    /// Degrees east of Greenwich, -180…180.
    public var longitude: Double

    /// A coordinate from degrees (not checked).
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The catalog's `[latitude, longitude]` pair; nil unless it is two finite numbers in range
    /// (a region's centre is shown on a map: a malformed one is left out rather than drawn wrong).
    init?(catalogPair pair: [Double]?) {
        guard let pair, pair.count == 2, let coordinate = GeoCoordinate.checked(latitude: pair[0], longitude: pair[1]) else { return nil }
        self = coordinate
    }

    /// The coordinate when both numbers are finite and in range, else nil.
    static func checked(latitude: Double, longitude: Double) -> GeoCoordinate? {
        guard latitude.isFinite, longitude.isFinite, (-90...90).contains(latitude), (-180...180).contains(longitude) else { return nil }
        return GeoCoordinate(latitude: latitude, longitude: longitude)
    }
}
