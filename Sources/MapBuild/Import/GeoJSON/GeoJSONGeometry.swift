/// A geometry's `type` (nil when absent or not a string) and `coordinates` (nil when absent or not
/// an array).
struct GeoJSONGeometry {
    var type: String?
    var coordinates: GeoJSONCoordinates?
}
