/// A rectangle of latitudes and longitudes, given by its south-west and north-east corners.
///
/// A box that crosses the antimeridian (180°) has a western longitude greater than its eastern one.
public struct GeoBoundingBox: Sendable, Hashable {
    /// The south-west corner: the smallest latitude, the western longitude.
    public var southWest: GeoCoordinate
    /// The north-east corner: the largest latitude, the eastern longitude.
    public var northEast: GeoCoordinate

    /// A box from its two corners.
    public init(southWest: GeoCoordinate, northEast: GeoCoordinate) {
        self.southWest = southWest
        self.northEast = northEast
    }

    /// The western longitude.
    public var west: Double { southWest.longitude }
    /// The southern latitude.
    public var south: Double { southWest.latitude }
    /// The eastern longitude.
    public var east: Double { northEast.longitude }
    /// The northern latitude.
    public var north: Double { northEast.latitude }

    /// True when `coordinate` lies inside the box or on its edge (across the antimeridian too).
    public func contains(_ coordinate: GeoCoordinate) -> Bool {
        guard (south...north).contains(coordinate.latitude) else { return false }
        if west <= east { return (west...east).contains(coordinate.longitude) }
        return coordinate.longitude >= west || coordinate.longitude <= east
    }

    /// The catalog's `[west, south, east, north]`; nil unless it is four finite numbers in range with
    /// south ≤ north.
    init?(catalogBox box: [Double]?) {
        guard let box, box.count == 4, box[1] <= box[3],
            let southWest = GeoCoordinate.checked(latitude: box[1], longitude: box[0]),
            let northEast = GeoCoordinate.checked(latitude: box[3], longitude: box[2])
        else { return nil }
        self.init(southWest: southWest, northEast: northEast)
    }
}
